# Warnings for project code; -Werror under TORCHADA_WERROR (on by default, always in CI).
add_library(torchada_warnings INTERFACE)
target_compile_options(torchada_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wshadow=local -Wno-missing-field-initializers>
  $<$<AND:$<BOOL:${TORCHADA_WERROR}>,$<COMPILE_LANGUAGE:C,CXX>>:-Werror>)

if(TORCHADA_SANITIZE)
  add_compile_options(-fsanitize=${TORCHADA_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${TORCHADA_SANITIZE})
endif()

# RelWithDebInfo (the default build type) keeps line tables and function names only (-g1):
# backtraces, profilers and gdb's breakpoints keep file:line, and the files that instantiate
# libtorch's templates (ops/) or the generated forwarders (shim/gen/) compile in about 60% of the
# time full debug info takes (measured: ops/src/device/training.cpp 26-33 s with -g, 15-17 s with
# -g1). Debug builds, and TORCHADA_FULL_DEBUG_INFO=ON, keep -g.
option(TORCHADA_FULL_DEBUG_INFO "Full debug info (-g) in RelWithDebInfo builds" OFF)
if(NOT TORCHADA_FULL_DEBUG_INFO)
  add_compile_options($<$<AND:$<CONFIG:RelWithDebInfo>,$<COMPILE_LANGUAGE:C,CXX>>:-g1>)
endif()
