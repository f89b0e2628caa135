# The MUSA side. With MUSA_HOME / MUSA_PATH pointing at a real SDK, the shim compiles against the
# SDK's headers (so every static_assert about MUSA values is checked against the real thing);
# without one it compiles against the simulator's headers in sim/include, which follow
# ../shared/musa-abi.md.
#
#   cmake -DMUSA_HOME=/usr/local/musa ...   (or -DMUSA_PATH=..., -DTORCHADA_MUSA_HOME=..., or the
#                                            MUSA_HOME / MUSA_PATH environment variables)
# A -D value wins over the environment. torchada-doctor reports which headers a build used.
set(_musa_home "")
foreach(_v MUSA_HOME MUSA_PATH)
  if(NOT _musa_home AND ${_v})  # -DMUSA_HOME=... / -DMUSA_PATH=...
    if(NOT EXISTS "${${_v}}/include/musa_runtime_api.h")
      message(FATAL_ERROR "-D${_v}=${${_v}}: no include/musa_runtime_api.h there (not a MUSA SDK)")
    endif()
    set(_musa_home "${${_v}}")
  endif()
endforeach()
if(_musa_home)
  set(TORCHADA_MUSA_HOME "${_musa_home}" CACHE PATH "Real MUSA SDK root (empty: use the simulator's headers)" FORCE)
else()
  foreach(_v MUSA_HOME MUSA_PATH)
    if(NOT _musa_home AND DEFINED ENV{${_v}} AND EXISTS "$ENV{${_v}}/include/musa_runtime_api.h")
      set(_musa_home "$ENV{${_v}}")
    endif()
  endforeach()
  set(TORCHADA_MUSA_HOME "${_musa_home}" CACHE PATH "Real MUSA SDK root (empty: use the simulator's headers)")
endif()

add_library(torchada_musa_headers INTERFACE)
if(TORCHADA_MUSA_HOME)
  target_include_directories(torchada_musa_headers SYSTEM INTERFACE ${TORCHADA_MUSA_HOME}/include)
  target_compile_definitions(torchada_musa_headers INTERFACE TORCHADA_REAL_MUSA_SDK=1)
  message(STATUS "torchada: building against the MUSA SDK at ${TORCHADA_MUSA_HOME}")
else()
  target_include_directories(torchada_musa_headers INTERFACE ${PROJECT_SOURCE_DIR}/sim/include)
  message(STATUS "torchada: no MUSA SDK (MUSA_HOME unset): using the simulator's MUSA headers")
endif()
