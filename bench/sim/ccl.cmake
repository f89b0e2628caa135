# bench_sim_ccl: the simulated MCCL's all-reduce against a shared-memory memcpy (ccl_bench.cc).
if(TARGET mccl_sim)
  add_executable(bench_sim_ccl ${CMAKE_CURRENT_LIST_DIR}/ccl_bench.cc)
  target_link_libraries(bench_sim_ccl PRIVATE benchmark::benchmark mccl_sim musart_sim
                        torchada_warnings)
endif()
