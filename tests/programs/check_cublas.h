// CUBLAS_CHECK for the cuBLAS programs in this folder: a failed cuBLAS call aborts the program
// with the status's name (check.h's CUDA_CHECK, for cuBLAS).
#pragma once

#include <cublas_v2.h>

#include <cstdio>
#include <cstdlib>

#include "check.h"

#define CUBLAS_CHECK(expr)                                                            \
  do {                                                                                \
    cublasStatus_t s_ = (expr);                                                       \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                \
      std::fprintf(stderr, "FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, \
                   cublasGetStatusName(s_));                                          \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)
