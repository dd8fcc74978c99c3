//===- Cuda.cpp - the CUDA driver API, loaded with dlopen -----------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Cuda.h"

#include <dlfcn.h>
#include <mutex>

using namespace fa::cuda;

std::string Driver::describe(CUresult result, const char *what) const {
  const char *name = nullptr, *message = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(result, &name);
  if (cuGetErrorString)
    cuGetErrorString(result, &message);
  return std::string(what) + ": " + (name ? name : "CUDA error " + std::to_string(result)) +
         (message ? std::string(" (") + message + ")" : std::string());
}

namespace {
/// Resolves `symbol` (the versioned name where cuda.h renames it).
template <typename Fn>
bool resolve(void *library, const char *symbol, Fn &fn, std::string &error) {
  fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (!fn)
    error = std::string("libcuda has no ") + symbol;
  return fn != nullptr;
}
} // namespace

Driver *fa::cuda::driver(std::string &error, bool &noDevice) {
  static Driver instance;
  static std::string initError;
  static bool initNoDevice = false;
  static bool ready = false;
  static std::once_flag once;
  std::call_once(once, [] {
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      initError = "no CUDA driver (libcuda.so.1 not found): no GPU here";
      initNoDevice = true;
      return;
    }
    Driver &d = instance;
    std::string &e = initError;
    bool ok = resolve(library, "cuInit", d.cuInit, e) &&
              resolve(library, "cuDeviceGet", d.cuDeviceGet, e) &&
              resolve(library, "cuDeviceGetCount", d.cuDeviceGetCount, e) &&
              resolve(library, "cuDeviceGetName", d.cuDeviceGetName, e) &&
              resolve(library, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, e) &&
              resolve(library, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, e) &&
              resolve(library, "cuCtxSetCurrent", d.cuCtxSetCurrent, e) &&
              resolve(library, "cuCtxGetCurrent", d.cuCtxGetCurrent, e) &&
              resolve(library, "cuCtxSynchronize", d.cuCtxSynchronize, e) &&
              resolve(library, "cuModuleLoadDataEx", d.cuModuleLoadDataEx, e) &&
              resolve(library, "cuModuleGetFunction", d.cuModuleGetFunction, e) &&
              resolve(library, "cuModuleUnload", d.cuModuleUnload, e) &&
              resolve(library, "cuFuncSetAttribute", d.cuFuncSetAttribute, e) &&
              resolve(library, "cuFuncGetAttribute", d.cuFuncGetAttribute, e) &&
              resolve(library, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                      d.cuOccupancyMaxActiveBlocksPerMultiprocessor, e) &&
              resolve(library, "cuLaunchKernel", d.cuLaunchKernel, e) &&
              resolve(library, "cuTensorMapEncodeTiled", d.cuTensorMapEncodeTiled, e) &&
              resolve(library, "cuMemAlloc_v2", d.cuMemAlloc, e) &&
              resolve(library, "cuMemFree_v2", d.cuMemFree, e) &&
              resolve(library, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, e) &&
              resolve(library, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH, e) &&
              resolve(library, "cuMemsetD8_v2", d.cuMemsetD8, e) &&
              resolve(library, "cuMemsetD32Async", d.cuMemsetD32Async, e) &&
              resolve(library, "cuEventCreate", d.cuEventCreate, e) &&
              resolve(library, "cuEventRecord", d.cuEventRecord, e) &&
              resolve(library, "cuEventSynchronize", d.cuEventSynchronize, e) &&
              (resolve(library, "cuEventElapsedTime_v2", d.cuEventElapsedTime, e) ||
               resolve(library, "cuEventElapsedTime", d.cuEventElapsedTime, e)) &&
              resolve(library, "cuEventDestroy_v2", d.cuEventDestroy, e) &&
              resolve(library, "cuGetErrorName", d.cuGetErrorName, e) &&
              resolve(library, "cuGetErrorString", d.cuGetErrorString, e);
    if (!ok)
      return;
    std::string optional; // a driver without it encodes every map afresh
    resolve(library, "cuTensorMapReplaceAddress", d.cuTensorMapReplaceAddress,
            optional);
    CUresult r = d.cuInit(0);
    int count = 0;
    if (r == 0)
      r = d.cuDeviceGetCount(&count);
    if (r != 0 || count == 0) {
      initError = r != 0 ? d.describe(r, "cuInit") : "no CUDA device";
      initNoDevice = true;
      return;
    }
    if ((r = d.cuDeviceGet(&d.device, 0)) ||
        (r = d.cuDevicePrimaryCtxRetain(&d.context, d.device)) ||
        (r = d.cuCtxSetCurrent(d.context))) {
      initError = d.describe(r, "creating the CUDA context");
      return;
    }
    char name[256] = {0};
    if (d.cuDeviceGetName(name, sizeof(name), d.device) == 0)
      d.deviceName = name;
    ready = true;
  });
  error = initError;
  noDevice = initNoDevice;
  if (!ready)
    return nullptr;
  makeCurrent(instance);
  return &instance;
}

void fa::cuda::makeCurrent(const Driver &d) {
  // The first caller's thread got the context at initialisation; a
  // framework's other threads (PyTorch's autograd worker runs the
  // backward) start with none.
  CUcontext current = nullptr;
  if (d.cuCtxGetCurrent(&current) != 0 || current != d.context)
    d.cuCtxSetCurrent(d.context);
}

int64_t fa::cuda::sharedMemoryPerBlock(Driver &d, std::string &error) {
  int optin = 0;
  if (CUresult r = d.cuDeviceGetAttribute(
          &optin, kDeviceAttributeMaxSharedMemoryPerBlockOptin, d.device)) {
    error = d.describe(r, "reading the device's shared memory per block");
    return -1;
  }
  return optin;
}

bool fa::cuda::sharedMemoryFits(Driver &d, const std::string &entry,
                                int64_t bytes, std::string &error) {
  int64_t optin = sharedMemoryPerBlock(d, error);
  if (optin < 0)
    return false;
  if (bytes <= optin)
    return true;
  error = entry + " needs " + std::to_string(bytes) +
          " bytes of shared memory per block; the " + d.deviceName +
          " allows " + std::to_string(optin) +
          " (it was built for a larger budget: rebuild it with fa-compile "
          "--shared-memory-budget " + std::to_string(optin / 1024) +
          " or less, on a tile that fits)";
  return false;
}
