# bench_sim_memory: device memory's costs (memory_bench.cc): allocation and free against the host
# allocator's, and an IPC export against a copy of the same bytes.
if(TARGET musart_sim)
  add_executable(bench_sim_memory ${CMAKE_CURRENT_LIST_DIR}/memory_bench.cc)
  target_link_libraries(bench_sim_memory PRIVATE benchmark::benchmark musart_sim torchada_warnings)
endif()
