# What the fuzzing entry points (fuzz/check, fuzz/sim) share: the option that builds the libFuzzer
# targets with clang, clang itself, and the corpus tests.
option(TORCHADA_FUZZ "Build the libFuzzer targets and run them briefly in ctest" OFF)
find_program(TORCHADA_CLANGXX NAMES clang++ clang++-18 clang++-17 clang++-16 clang++-15 clang++-14)

# A fuzzing entry point's two ctests: its checked-in corpus replayed (under the build's
# sanitizers) and the corpus compared with what its generator writes now.
#   torchada_add_fuzz_corpus_tests(REPLAY_TEST <name> UP_TO_DATE_TEST <name> REPLAY <target>
#                                  GENERATOR <target> CORPUS <dir> REMAKE <script, for the message>)
function(torchada_add_fuzz_corpus_tests)
  cmake_parse_arguments(F "" "REPLAY_TEST;UP_TO_DATE_TEST;REPLAY;GENERATOR;CORPUS;REMAKE" "" ${ARGN})
  add_test(NAME ${F_REPLAY_TEST} COMMAND ${F_REPLAY} ${F_CORPUS})
  add_test(NAME ${F_UP_TO_DATE_TEST}
           COMMAND ${CMAKE_COMMAND} -DGEN=$<TARGET_FILE:${F_GENERATOR}> -DCORPUS=${F_CORPUS}
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}/corpus_made -DREMAKE=${F_REMAKE}
                   -P ${PROJECT_SOURCE_DIR}/fuzz/compare_corpus.cmake)
endfunction()
