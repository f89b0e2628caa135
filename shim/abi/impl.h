// The hand-written implementations' declarations for the ABI being compiled.
#pragma once
#include "abi/export.h"
#if TORCHADA_CUDA_ABI == 13
#include "gen/cudart13_impl.h"
#include "gen/cudart13_types.h"
#else
#include "gen/cudart12_impl.h"
#include "gen/cudart12_types.h"
#endif
