#!/usr/bin/env bash
# Installs what building parpat needs from Debian's packages, when something is missing, and
# configures + builds into build/ (CUDA and OpenCL are used when present).
#   BUILD_DIR       build folder (default build)
#   CUDA_ARCH       CMAKE_CUDA_ARCHITECTURES (default 90: sm_90 code plus PTX)
#   EXTRA_CMAKE     extra arguments for cmake
#   PARPAT_PYTHON_PACKAGE=0  leaves out the Python package (otherwise built into $BUILD_DIR/venv:
#                   nanobind and scikit-build-core from PyPI, the extension linked against this
#                   build's library)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev
          ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd python3 python3-dev python3-numpy python3-mpi4py python3-venv
          libzip-dev libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

BUILD_DIR=${BUILD_DIR:-build}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
  "${launcher[@]}" ${EXTRA_CMAKE:-}
cmake --build "$BUILD_DIR" -j "$(nproc)"

# The Python package: a virtual environment beside the build (Debian's numpy, PyPI's nanobind,
# scikit-build-core and pytest), the library installed into $BUILD_DIR/prefix and the extension
# built against it (`pip install .` alone builds the library again from source).
if [ "${PARPAT_PYTHON_PACKAGE:-1}" = 1 ]; then
  venv="$BUILD_DIR/venv"
  # Its python is the first with numpy (the one on PATH, else Debian's, which has python3-numpy).
  python=python3
  python3 -c 'import numpy' 2>/dev/null || python=/usr/bin/python3
  [ -x "$venv/bin/python" ] || "$python" -m venv --system-site-packages "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "nanobind>=2.2" "scikit-build-core>=0.10" pytest
  cmake --install "$BUILD_DIR" --prefix "$BUILD_DIR/prefix" >/dev/null
  "$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --no-deps \
    --config-settings=build-dir="$BUILD_DIR/python" --config-settings=cmake.define.CMAKE_PREFIX_PATH="$PWD/$BUILD_DIR/prefix" .
fi
