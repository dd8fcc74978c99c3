//===- Cuda.h - the CUDA driver API, loaded with dlopen ---------*- C++ -*-===//
//
// Part of fa-mlir.
//
// The runtime never links libcuda: it opens libcuda.so.1 at run time, so it
// builds on machines with no driver and fails with a message (not a crash)
// on machines with no GPU. Only the handful of entry points fa-mlir uses are
// declared, with the driver's own ABI.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_CUDA_H
#define FA_RUNTIME_CUDA_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace fa {
namespace cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

constexpr int kFuncAttributeNumRegs = 4;
constexpr int kDeviceAttributeMultiprocessorCount = 16;
constexpr int kDeviceAttributeMaxSharedMemoryPerBlockOptin = 97;
constexpr int kFuncAttributeMaxDynamicSharedBytes = 8;
constexpr int kJitInfoLogBuffer = 3, kJitInfoLogBufferSize = 4;
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferSize = 6;

/// The loaded driver, with device 0's primary context current.
struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction,
                                                          int, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  /// Sets `count` 32-bit words, in order with `stream`'s work.
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t count,
                               CUstream stream);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  /// cuTensorMapEncodeTiled, with cuda.h's enums as ints (TensorMap.h).
  CUresult (*cuTensorMapEncodeTiled)(void *tensorMap, int dataType,
                                     unsigned rank, void *globalAddress,
                                     const uint64_t *globalDim,
                                     const uint64_t *globalStrides,
                                     const unsigned *boxDim,
                                     const unsigned *elementStrides,
                                     int interleave, int swizzle,
                                     int l2Promotion, int oobFill);
  /// Re-points an encoded map at another base address (CUDA 12.0+); null
  /// where the driver lacks it (then maps are encoded afresh).
  CUresult (*cuTensorMapReplaceAddress)(void *tensorMap,
                                        void *globalAddress) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);

  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string deviceName;

  /// "<what>: CUDA_ERROR_X (message)" for a failed call.
  std::string describe(CUresult result, const char *what) const;
};

/// The process-wide driver; null with a reason if libcuda is missing, or
/// no device is present (`noDevice` then tells the caller to exit 77).
Driver *driver(std::string &error, bool &noDevice);

/// The device's opt-in maximum of shared memory per block, in bytes (an
/// H100's 232448, an A100's 166912): the budget a kernel built for this
/// device may take (fa-compile --shared-memory-budget, in KB). -1 with
/// `error` if the driver cannot say.
int64_t sharedMemoryPerBlock(Driver &d, std::string &error);

/// Whether `entry`, built for `bytes` of dynamic shared memory, fits the
/// device's opt-in maximum per block; if not, `error` says so in one line
/// (a kernel built with a larger --shared-memory-budget than the device
/// has: the user's to fix, not a CUDA error).
bool sharedMemoryFits(Driver &d, const std::string &entry, int64_t bytes,
                      std::string &error);

/// Makes the driver's context current on the calling thread if it is not:
/// every launch does, since a framework may launch from threads that never
/// loaded a kernel (PyTorch's autograd worker).
void makeCurrent(const Driver &d);

} // namespace cuda
} // namespace fa

#endif // FA_RUNTIME_CUDA_H
