// The muBLAS GemmEx family's exported (C++ mangled) names, per ../shared/musa-abi.md. A test
// (tests/shim/cublas) checks them against the names the compiler gives the MUSA header's
// declarations, so a header change cannot silently break the lookup.
#pragma once

namespace torchada::mangled {
inline constexpr const char kGemmEx[] =
    "_Z12mublasGemmExP15_mublasHandle_t17mublasOperation_tS1_iiiPKvS3_14musaDataType_tiS3_S4_"
    "iS3_PvS4_i19mublasComputeType_t16mublasGemmAlgo_t";
inline constexpr const char kGemmExDataTypeCompute[] =
    "_Z12mublasGemmExP15_mublasHandle_t17mublasOperation_tS1_iiiPKvS3_14musaDataType_tiS3_S4_"
    "iS3_PvS4_iS4_16mublasGemmAlgo_t";
inline constexpr const char kGemmBatchedEx[] =
    "_Z19mublasGemmBatchedExP15_mublasHandle_t17mublasOperation_tS1_iiiPKvPKS3_14musaDataType_"
    "tiS5_S6_iS3_PKPvS6_ii19mublasComputeType_t16mublasGemmAlgo_t";
inline constexpr const char kGemmBatchedExDataTypeCompute[] =
    "_Z19mublasGemmBatchedExP15_mublasHandle_t17mublasOperation_tS1_iiiPKvPKS3_14musaDataType_"
    "tiS5_S6_iS3_PKPvS6_iiS6_16mublasGemmAlgo_t";
inline constexpr const char kGemmStridedBatchedEx[] =
    "_Z26mublasGemmStridedBatchedExP15_mublasHandle_t17mublasOperation_tS1_iiiPKvS3_14musaDataT"
    "ype_tixS3_S4_ixS3_PvS4_ixi19mublasComputeType_t16mublasGemmAlgo_t";
inline constexpr const char kGemmStridedBatchedExDataTypeCompute[] =
    "_Z26mublasGemmStridedBatchedExP15_mublasHandle_t17mublasOperation_tS1_iiiPKvS3_14musaDataT"
    "ype_tixS3_S4_ixS3_PvS4_ixiS4_16mublasGemmAlgo_t";
}  // namespace torchada::mangled
