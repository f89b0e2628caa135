# A checked-in corpus is exactly what its generator writes now.
#   cmake -DGEN=<generator> -DCORPUS=<fuzz/corpus/NAME> -DWORK=<scratch dir>
#         -DREMAKE=<the script that regenerates it> -P ...
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${GEN} ${WORK} RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GEN} failed: ${rc}")
endif()
file(GLOB made RELATIVE ${WORK} ${WORK}/*)
file(GLOB kept RELATIVE ${CORPUS} ${CORPUS}/*)
list(SORT made)
list(SORT kept)
if(NOT made STREQUAL kept)
  message(FATAL_ERROR "fuzz corpus file list differs from the generator's; run ${REMAKE}\n"
                      "generated: ${made}\nchecked in: ${kept}")
endif()
foreach(f IN LISTS made)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/${f} ${CORPUS}/${f}
                  RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "fuzz corpus file ${f} differs from the generator's; run ${REMAKE}")
  endif()
endforeach()
list(LENGTH made n)
message(STATUS "fuzz corpus: ${n} files, as generated")
file(REMOVE_RECURSE ${WORK})
