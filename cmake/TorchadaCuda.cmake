# The CUDA side: NVIDIA's headers and libraries, read at build time so that every value the shim
# relies on comes from the vendor header of the ABI it serves.
#
#   TORCHADA_CUDA13_ROOT  CUDA 13 toolkit (headers, libcudart.so.13)   default: CUDAToolkit_ROOT, /usr/local/cuda
#   TORCHADA_CUDA12_ROOT  CUDA 12 runtime (headers, libcudart.so.12)   default: .deps/cuda12 (scripts/setup-deps.sh)
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
set(TORCHADA_CUDA13_INCLUDE ${TORCHADA_CUDA13_ROOT}/include)
find_library(TORCHADA_CUDART13_LIBRARY NAMES libcudart.so.13
             PATHS ${TORCHADA_CUDA13_ROOT}/lib64 ${TORCHADA_CUDA13_ROOT}/lib NO_DEFAULT_PATH)

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
message(STATUS "torchada: CUDA 13 at ${TORCHADA_CUDA13_ROOT}, CUDA 12 at ${TORCHADA_CUDA12_ROOT}, nvcc: ${TORCHADA_NVCC}")
