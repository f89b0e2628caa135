/* torchada: the project's own declaration of the part of MTML (Moore Threads Management Library,
 * libmtml.so: NVML's counterpart on MUSA machines) that torchada's libnvidia-ml.so.1 forwards to,
 * as implemented by the CPU simulator in sim/mtml. Written from MTML's public API documentation
 * (MTML 2.x): an object-handle API (library -> system, devices -> their GPU and memory objects),
 * MtmlReturn codes numbered in that order, MTML_ERROR_UNKNOWN = 999 [B].
 * Units as documented: memory in bytes, clocks in MHz, temperature in degrees Celsius, power in
 * milliwatts, utilisation in percent.
 * No default arguments, so it is usable from C.
 */
#ifndef TORCHADA_MTML_H
#define TORCHADA_MTML_H

#if defined(__GNUC__)
#define MTML_API __attribute__((visibility("default")))
#else
#define MTML_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define MTML_DRIVER_VERSION_BUFFER_SIZE 80
#define MTML_DEVICE_NAME_BUFFER_SIZE 32
#define MTML_DEVICE_UUID_BUFFER_SIZE 48
#define MTML_DEVICE_PCI_SBDF_BUFFER_SIZE 32

typedef enum {
  MTML_SUCCESS = 0,
  MTML_ERROR_DRIVER_NOT_LOADED,
  MTML_ERROR_DRIVER_FAILURE,
  MTML_ERROR_INVALID_ARGUMENT,
  MTML_ERROR_NOT_SUPPORTED,
  MTML_ERROR_NO_PERMISSION,
  MTML_ERROR_INSUFFICIENT_SIZE,
  MTML_ERROR_NOT_FOUND,
  MTML_ERROR_INSUFFICIENT_MEMORY,
  MTML_ERROR_DRIVER_TOO_OLD,
  MTML_ERROR_DRIVER_TOO_NEW,
  MTML_ERROR_TIMEOUT,
  MTML_ERROR_RESOURCE_IS_BUSY,
  MTML_ERROR_UNKNOWN = 999
} MtmlReturn;

typedef struct MtmlLibrary MtmlLibrary;
typedef struct MtmlSystem MtmlSystem;
typedef struct MtmlDevice MtmlDevice;
typedef struct MtmlGpu MtmlGpu;
typedef struct MtmlMemory MtmlMemory;

/* PCI attributes of a device. */
typedef struct {
  char sbdf[MTML_DEVICE_PCI_SBDF_BUFFER_SIZE]; /* segment:bus:device.function, "%08x:%02x:%02x.0" */
  unsigned int segment;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId; /* device ID << 16 | vendor ID */
  unsigned int pciSubsystemId;
  unsigned int busWidth; /* deprecated: 0 */
  float pciMaxSpeed;     /* GT/s per lane */
  float pciCurSpeed;
  unsigned int pciMaxWidth;
  unsigned int pciCurWidth;
  unsigned int pciMaxGen;
  unsigned int pciCurGen;
  int rsvd[6];
} MtmlPciInfo;

/* Library and system. */
MtmlReturn MTML_API mtmlLibraryInit(MtmlLibrary** lib);
MtmlReturn MTML_API mtmlLibraryShutDown(MtmlLibrary* lib);
MtmlReturn MTML_API mtmlLibraryInitSystem(const MtmlLibrary* lib, MtmlSystem** sys);
MtmlReturn MTML_API mtmlSystemGetDriverVersion(const MtmlSystem* sys, char* version,
                                               unsigned int length);
MtmlReturn MTML_API mtmlLibraryCountDevice(const MtmlLibrary* lib, unsigned int* count);
MtmlReturn MTML_API mtmlLibraryInitDeviceByIndex(const MtmlLibrary* lib, unsigned int index,
                                                 MtmlDevice** dev);

/* Devices. */
MtmlReturn MTML_API mtmlDeviceGetIndex(const MtmlDevice* dev, unsigned int* index);
MtmlReturn MTML_API mtmlDeviceGetName(const MtmlDevice* dev, char* name, unsigned int length);
MtmlReturn MTML_API mtmlDeviceGetUUID(const MtmlDevice* dev, char* uuid, unsigned int length);
MtmlReturn MTML_API mtmlDeviceGetPciInfo(const MtmlDevice* dev, MtmlPciInfo* pci);
MtmlReturn MTML_API mtmlDeviceGetPowerUsage(const MtmlDevice* dev, unsigned int* power);
MtmlReturn MTML_API mtmlDeviceInitGpu(const MtmlDevice* dev, MtmlGpu** gpu);
MtmlReturn MTML_API mtmlDeviceInitMemory(const MtmlDevice* dev, MtmlMemory** mem);

/* A device's graphic core. */
MtmlReturn MTML_API mtmlGpuGetUtilization(const MtmlGpu* gpu, unsigned int* utilization);
MtmlReturn MTML_API mtmlGpuGetTemperature(const MtmlGpu* gpu, unsigned int* temp);
MtmlReturn MTML_API mtmlGpuGetClock(const MtmlGpu* gpu, unsigned int* clockMhz);
MtmlReturn MTML_API mtmlGpuGetMaxClock(const MtmlGpu* gpu, unsigned int* clockMhz);

/* A device's memory. */
MtmlReturn MTML_API mtmlMemoryGetTotal(const MtmlMemory* mem, unsigned long long* total);
MtmlReturn MTML_API mtmlMemoryGetUsed(const MtmlMemory* mem, unsigned long long* used);
MtmlReturn MTML_API mtmlMemoryGetUtilization(const MtmlMemory* mem, unsigned int* utilization);

#ifdef __cplusplus
}
#endif

#endif /* TORCHADA_MTML_H */
