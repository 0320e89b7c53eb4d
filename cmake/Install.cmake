# `cmake --install BUILD --prefix P` installs the public headers, the static library, the CLI
# and a CMake package, so that another project finds it with
#   find_package(parpat 0.1 REQUIRED [COMPONENTS cuda opencl])
#   target_link_libraries(app PRIVATE parpat::parpat)
# The backends this build has are the package's components (parpat_HAS_CUDA, parpat_HAS_OPENCL).
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/parpat DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS parpat EXPORT parpatTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
                                            LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS parpat_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET parpat_mpi)
  install(TARGETS parpat_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

set(PARPAT_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/parpat)
install(EXPORT parpatTargets NAMESPACE parpat:: DESTINATION ${PARPAT_PACKAGE_DIR})
set(PARPAT_CONFIG_HAS_CUDA ${PARPAT_HAVE_CUDA})
set(PARPAT_CONFIG_HAS_OPENCL ${PARPAT_HAVE_OPENCL})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/parpatConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/parpatConfig.cmake
                              INSTALL_DESTINATION ${PARPAT_PACKAGE_DIR})
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/parpatConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/parpatConfig.cmake ${PROJECT_BINARY_DIR}/parpatConfigVersion.cmake
        DESTINATION ${PARPAT_PACKAGE_DIR})

# The consumer project under tests/consumer is built against an installed copy of this build:
# the test installs into the build folder, configures the consumer with a fresh CMake and runs it.
if(BUILD_TESTING)
  set(consumer_prefix ${PROJECT_BINARY_DIR}/consumer-install)
  set(consumer_build ${PROJECT_BINARY_DIR}/consumer-build)
  add_test(NAME consumer_find_package
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DPREFIX=${consumer_prefix}
                   -DCONSUMER_SOURCE=${PROJECT_SOURCE_DIR}/tests/consumer
                   -DCONSUMER_BUILD=${consumer_build} -DGENERATOR=${CMAKE_GENERATOR}
                   -P ${PROJECT_SOURCE_DIR}/cmake/RunConsumer.cmake)
  set_tests_properties(consumer_find_package PROPERTIES TIMEOUT 600)
endif()
