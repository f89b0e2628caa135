# Negative control: runs a program that links NVIDIA's libcudart WITHOUT the shim preloaded. With
# no NVIDIA driver on the machine its first cudart call must fail cleanly (the program's own
# failure exit, not a crash, not a hang), which shows that the preload is what makes it pass.
#   cmake -DPROGRAM=<binary> -P expect_no_driver.cmake
if(NOT PROGRAM)
  message(FATAL_ERROR "expect_no_driver.cmake: -DPROGRAM= is required")
endif()
unset(ENV{LD_PRELOAD})
unset(ENV{TORCHADA_BACKEND})
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 60)
message(STATUS "exit: ${rc}\n${out}${err}")
if(NOT rc STREQUAL "1")
  message(FATAL_ERROR "expected exit status 1 without the preload, got '${rc}'")
endif()
if(NOT out MATCHES "FAIL cudaGetDeviceCount\\(&count\\) returned [1-9]")
  message(FATAL_ERROR "expected cudaGetDeviceCount to fail without the preload")
endif()
