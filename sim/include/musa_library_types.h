// The simulator's description of MUSA's library data types (musaDataType_t), shared by muBLAS,
// muBLASLt and the shim. ../shared/musa-abi.md: the MUSA_R_* names are known, their values are
// assumed equal to CUDA's [C]; the shim proves or translates them at build time.
#pragma once

typedef enum musaDataType_t {
  MUSA_R_32F = 0,
  MUSA_R_64F = 1,
  MUSA_R_16F = 2,
  MUSA_R_8I = 3,
  MUSA_C_32F = 4,
  MUSA_C_64F = 5,
  MUSA_C_16F = 6,
  MUSA_C_8I = 7,
  MUSA_R_8U = 8,
  MUSA_C_8U = 9,
  MUSA_R_32I = 10,
  MUSA_C_32I = 11,
  MUSA_R_32U = 12,
  MUSA_C_32U = 13,
  MUSA_R_16BF = 14,
  MUSA_C_16BF = 15,
  MUSA_R_16I = 20,
  MUSA_R_64I = 24,
  MUSA_R_8F_E4M3 = 28,
  MUSA_R_8F_E5M2 = 29,
} musaDataType_t;
typedef musaDataType_t musaDataType;
