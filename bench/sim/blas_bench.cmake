# bench_sim_blas: large SGEMM through the simulated muBLAS (mublasSgemm + stream sync) against
# OpenBLAS's cblas_sgemm called directly (blas_bench.cc).
if(TARGET mublas_sim)
  add_executable(bench_sim_blas ${CMAKE_CURRENT_LIST_DIR}/blas_bench.cc)
  target_link_libraries(bench_sim_blas PRIVATE benchmark::benchmark mublas_sim musart_sim
                        torchada_openblas torchada_warnings)
endif()
