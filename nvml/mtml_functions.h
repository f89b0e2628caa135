// The MTML functions torchada's NVML forwards to (nvml.cc resolves each, typed from mtml.h), as an
// X-macro: torchada-doctor checks that the MTML it finds exports them.
#pragma once

#define TORCHADA_MTML_FUNCTIONS(X) \
  X(mtmlLibraryInit)               \
  X(mtmlLibraryInitSystem)         \
  X(mtmlSystemGetDriverVersion)    \
  X(mtmlLibraryCountDevice)        \
  X(mtmlLibraryInitDeviceByIndex)  \
  X(mtmlDeviceGetPciInfo)          \
  X(mtmlDeviceGetPowerUsage)       \
  X(mtmlDeviceInitGpu)             \
  X(mtmlDeviceInitMemory)          \
  X(mtmlGpuGetUtilization)         \
  X(mtmlGpuGetTemperature)         \
  X(mtmlGpuGetClock)               \
  X(mtmlGpuGetMaxClock)            \
  X(mtmlMemoryGetTotal)            \
  X(mtmlMemoryGetUsed)             \
  X(mtmlMemoryGetUtilization)
