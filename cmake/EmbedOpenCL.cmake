# parpat_embed_opencl(OUT_VAR file.cl ...) turns each OpenCL C source into a generated .cpp that
# defines `extern const char* const parpat_cl_<stem>`, so kernels ship inside the library and stay
# compilable on their own with any OpenCL compiler.
function(parpat_embed_opencl out_var)
  set(generated)
  foreach(cl_file IN LISTS ARGN)
    get_filename_component(abs "${cl_file}" ABSOLUTE)
    get_filename_component(stem "${cl_file}" NAME_WE)
    string(MAKE_C_IDENTIFIER "${stem}" ident)
    set(out "${CMAKE_CURRENT_BINARY_DIR}/embedded_${ident}.cpp")
    add_custom_command(
      OUTPUT "${out}"
      COMMAND ${CMAKE_COMMAND} -DIN=${abs} -DOUT=${out} -DIDENT=${ident}
              -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFile.cmake
      DEPENDS "${abs}" ${PROJECT_SOURCE_DIR}/cmake/EmbedFile.cmake
      COMMENT "Embedding OpenCL source ${stem}.cl")
    list(APPEND generated "${out}")
  endforeach()
  set(${out_var} ${generated} PARENT_SCOPE)
endfunction()
