# The CUDA side: NVIDIA's headers and libraries, read at build time so that every value the shim
# relies on comes from the vendor header of the ABI it serves.
#
#   TORCHADA_CUDA13_ROOT      CUDA 13 toolkit (nvcc, the libraries test programs link)
#                             default: CUDAToolkit_ROOT, /usr/local/cuda
#   TORCHADA_CUDA13_ABI_ROOT  the CUDA 13 ABI the shim serves: headers and reference libraries of
#                             the wheels the pinned PyTorch brings (cudart 13.2, cuBLAS 13.4, NCCL
#                             2.30)     default: .deps/cuda13 (scripts/setup-deps.sh)
#   TORCHADA_CUDA12_ROOT      CUDA 12 runtime and cuBLAS (headers, libraries)
#                             default: .deps/cuda12 (scripts/setup-deps.sh)
if(NOT TORCHADA_CUDA13_ROOT)
  if(CUDAToolkit_ROOT)
    set(_cuda13 ${CUDAToolkit_ROOT})
  elseif(DEFINED ENV{CUDAToolkit_ROOT})
    set(_cuda13 $ENV{CUDAToolkit_ROOT})
  else()
    set(_cuda13 /usr/local/cuda)
  endif()
  set(TORCHADA_CUDA13_ROOT ${_cuda13} CACHE PATH "CUDA 13 toolkit root")
endif()
if(NOT EXISTS ${TORCHADA_CUDA13_ROOT}/include/cuda_runtime_api.h)
  message(FATAL_ERROR "CUDA 13 headers not found under TORCHADA_CUDA13_ROOT=${TORCHADA_CUDA13_ROOT}. "
                      "Install the CUDA toolkit or pass -DCUDAToolkit_ROOT=/path.")
endif()

# The shim's CUDA 13 declarations: symbols/ and shim/gen were generated from these headers, which
# declare functions a toolkit older than the pinned wheels lacks (a toolkit's headers alone cannot
# build it). Versions below are the oldest the tables cover; newer ones need symbols/update.py.
set(TORCHADA_CUDA13_ABI_ROOT ${PROJECT_SOURCE_DIR}/.deps/cuda13 CACHE PATH
    "CUDA 13 ABI headers + reference libraries (PyPI wheels unpacked by scripts/setup-deps.sh)")
function(torchada_require_version file macro minimum what)
  set(_path ${TORCHADA_CUDA13_ABI_ROOT}/include/${file})
  set(_value 0)
  if(EXISTS ${_path})
    file(STRINGS ${_path} _line REGEX "^#define[ \t]+${macro}[ \t]+[0-9]+")
    string(REGEX MATCH "[0-9]+$" _value "${_line}")
  endif()
  if(NOT _value OR _value LESS ${minimum})
    message(FATAL_ERROR "${what} headers (${macro} >= ${minimum}) not found under "
                        "TORCHADA_CUDA13_ABI_ROOT=${TORCHADA_CUDA13_ABI_ROOT} (found: '${_value}'). "
                        "torchada's tables serve the libraries the pinned PyTorch brings, newer than "
                        "the CUDA toolkit's: run scripts/setup-deps.sh (it unpacks those PyPI wheels "
                        "into .deps/cuda13), or point -DTORCHADA_CUDA13_ABI_ROOT at a tree with "
                        "include/ and lib/ of the same releases.")
  endif()
endfunction()
torchada_require_version(cuda_runtime_api.h CUDART_VERSION 13020 "CUDA runtime 13.2")
torchada_require_version(cublas_api.h CUBLAS_VER_MINOR 4 "cuBLAS 13.4")  # CUBLAS_VER_MAJOR 13: the .13 soname
torchada_require_version(nccl.h NCCL_VERSION_CODE 23007 "NCCL 2.30.7")
if(NOT EXISTS ${TORCHADA_CUDA13_ABI_ROOT}/include/crt/host_defines.h)
  message(FATAL_ERROR "crt/host_defines.h not found under ${TORCHADA_CUDA13_ABI_ROOT}/include: "
                      "run scripts/setup-deps.sh (PyPI's nvidia-cuda-crt).")
endif()
set(TORCHADA_CUDA13_INCLUDE ${TORCHADA_CUDA13_ABI_ROOT}/include)
# A build tree configured before .deps/cuda13 existed cached the toolkit's (older) library.
if(TORCHADA_CUDART13_LIBRARY AND NOT TORCHADA_CUDART13_LIBRARY MATCHES "^${TORCHADA_CUDA13_ABI_ROOT}/")
  unset(TORCHADA_CUDART13_LIBRARY CACHE)
endif()
find_library(TORCHADA_CUDART13_LIBRARY NAMES libcudart.so.13
             PATHS ${TORCHADA_CUDA13_ABI_ROOT}/lib NO_DEFAULT_PATH)
# NVIDIA's cuBLAS, cuBLASLt and CUPTI that test programs link like a user's program: the ABI tree's first,
# beside its libcudart.so.13 (a program linked with libraries from two folders that both hold
# libcudart.so.13 has no safe RUNPATH order), the toolkit's otherwise.
foreach(_lib CUBLAS:libcublas.so.13 CUBLASLT:libcublasLt.so.13 CUPTI:libcupti.so.13)
  string(REPLACE ":" ";" _lib "${_lib}")
  list(GET _lib 0 _var)
  list(GET _lib 1 _name)
  set(_var TORCHADA_${_var}13_LIBRARY)
  if(${_var} AND NOT ${_var} MATCHES "^${TORCHADA_CUDA13_ABI_ROOT}/" AND
     EXISTS ${TORCHADA_CUDA13_ABI_ROOT}/lib/${_name})
    unset(${_var} CACHE)
  endif()
  find_library(${_var} NAMES ${_name} PATHS ${TORCHADA_CUDA13_ABI_ROOT}/lib
               ${TORCHADA_CUDA13_ROOT}/lib64 ${TORCHADA_CUDA13_ROOT}/lib NO_DEFAULT_PATH)
endforeach()

set(TORCHADA_CUDA12_ROOT ${PROJECT_SOURCE_DIR}/.deps/cuda12 CACHE PATH "CUDA 12 root (runtime and cuBLAS headers + libraries)")
if(NOT EXISTS ${TORCHADA_CUDA12_ROOT}/include/cuda_runtime_api.h)
  message(FATAL_ERROR "CUDA 12 runtime headers not found under TORCHADA_CUDA12_ROOT=${TORCHADA_CUDA12_ROOT}. "
                      "Run scripts/setup-deps.sh (it unpacks PyPI's nvidia-cuda-runtime-cu12 there).")
endif()
if(NOT EXISTS ${TORCHADA_CUDA12_ROOT}/include/cublas_api.h)
  message(FATAL_ERROR "CUDA 12 cuBLAS headers not found under TORCHADA_CUDA12_ROOT=${TORCHADA_CUDA12_ROOT}. "
                      "Run scripts/setup-deps.sh (it unpacks PyPI's nvidia-cublas-cu12 there).")
endif()
set(TORCHADA_CUDA12_INCLUDE ${TORCHADA_CUDA12_ROOT}/include)
find_library(TORCHADA_CUDART12_LIBRARY NAMES libcudart.so.12
             PATHS ${TORCHADA_CUDA12_ROOT}/lib NO_DEFAULT_PATH)

# Header-only interface targets: one per ABI. A translation unit includes exactly one of them.
add_library(torchada_cuda13_headers INTERFACE)
target_include_directories(torchada_cuda13_headers SYSTEM INTERFACE ${TORCHADA_CUDA13_INCLUDE})
add_library(torchada_cuda12_headers INTERFACE)
target_include_directories(torchada_cuda12_headers SYSTEM INTERFACE ${TORCHADA_CUDA12_INCLUDE})

find_program(TORCHADA_NVCC nvcc PATHS ${TORCHADA_CUDA13_ROOT}/bin NO_DEFAULT_PATH)
message(STATUS "torchada: CUDA 13 toolkit at ${TORCHADA_CUDA13_ROOT}, CUDA 13 ABI at ${TORCHADA_CUDA13_ABI_ROOT}, CUDA 12 at ${TORCHADA_CUDA12_ROOT}, nvcc: ${TORCHADA_NVCC}")
