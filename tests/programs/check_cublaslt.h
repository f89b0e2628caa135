// LT_CHECK for the cuBLASLt programs in this folder: a failed cuBLASLt call aborts the program
// with the status's name (check.h's CUDA_CHECK, for cuBLASLt; these programs link libcublasLt
// only, so the name comes from cublasLtGetStatusName).
#pragma once

#include <cublasLt.h>

#include <cstdio>
#include <cstdlib>

#include "check.h"

#define LT_CHECK(expr)                                                                \
  do {                                                                                \
    cublasStatus_t s_ = (expr);                                                       \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                \
      std::fprintf(stderr, "FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, \
                   cublasLtGetStatusName(s_));                                        \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)
