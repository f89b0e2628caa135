# Warnings for project code; -Werror under TORCHADA_WERROR (on by default, always in CI).
add_library(torchada_warnings INTERFACE)
target_compile_options(torchada_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wshadow=local -Wno-missing-field-initializers>
  $<$<AND:$<BOOL:${TORCHADA_WERROR}>,$<COMPILE_LANGUAGE:C,CXX>>:-Werror>)

if(TORCHADA_SANITIZE)
  add_compile_options(-fsanitize=${TORCHADA_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${TORCHADA_SANITIZE})
endif()
