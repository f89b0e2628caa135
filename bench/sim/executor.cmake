# bench_sim_executor: the device-code executor's costs (executor_bench.cc): a launch against the
# cheapest stream work, a plain kernel's elements against the same loop on the host, a fiber
# barrier per thread.
if(TARGET musart_sim)
  add_executable(bench_sim_executor ${CMAKE_CURRENT_LIST_DIR}/executor_bench.cc)
  target_link_libraries(bench_sim_executor PRIVATE benchmark::benchmark musart_sim
                        torchada_warnings ${CMAKE_DL_LIBS})
endif()
