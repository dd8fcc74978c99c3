//===- CApi.cpp - C API of the fa-mlir runtime ----------------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/fa_runtime.h"

#include "fa/runtime/Kernel.h"

#include <string>

namespace {
thread_local std::string lastError;
thread_local bool lastNoGpu = false;

int fail(const std::string &why, bool noGpu = false) {
  lastError = why;
  lastNoGpu = noGpu;
  return -1;
}
} // namespace

struct fa_kernel {
  std::unique_ptr<fa::Kernel> kernel;
};

extern "C" fa_kernel *fa_kernel_load(const char *manifestPath) {
  if (!manifestPath) {
    fail("fa_kernel_load: null path");
    return nullptr;
  }
  std::string error;
  bool noDevice = false;
  auto kernel = fa::Kernel::load(manifestPath, error, noDevice);
  if (!kernel) {
    fail(error, noDevice);
    return nullptr;
  }
  lastError.clear();
  return new fa_kernel{std::move(kernel)};
}

extern "C" int fa_kernel_forward(const fa_kernel *kernel,
                                 const fa_forward_args *a, void *stream) {
  if (!kernel || !a)
    return fail("fa_kernel_forward: null kernel or args");
  fa::ForwardArgs args;
  args.q = reinterpret_cast<fa::cuda::CUdeviceptr>(a->q);
  args.k = reinterpret_cast<fa::cuda::CUdeviceptr>(a->k);
  args.v = reinterpret_cast<fa::cuda::CUdeviceptr>(a->v);
  args.o = reinterpret_cast<fa::cuda::CUdeviceptr>(a->o);
  args.lse = reinterpret_cast<fa::cuda::CUdeviceptr>(a->lse);
  args.batch = a->batch;
  args.queryHeads = a->q_heads;
  args.kvHeads = a->kv_heads;
  args.queryLen = a->q_len;
  args.keyLen = a->kv_len;
  for (int i = 0; i < 3; ++i) {
    args.qStride[i] = a->q_stride[i];
    args.kStride[i] = a->k_stride[i];
    args.vStride[i] = a->v_stride[i];
    args.oStride[i] = a->o_stride[i];
  }
  args.lseStride[0] = a->lse_stride[0];
  args.lseStride[1] = a->lse_stride[1];
  args.alibiSlopes = reinterpret_cast<fa::cuda::CUdeviceptr>(a->alibi_slopes);
  args.alibiStrideB = a->alibi_stride_b;
  std::string error;
  if (!kernel->kernel->forward(args, static_cast<fa::cuda::CUstream>(stream),
                               error))
    return fail(error);
  return 0;
}

extern "C" void fa_kernel_free(fa_kernel *kernel) { delete kernel; }

extern "C" int64_t fa_kernel_head_dim(const fa_kernel *kernel) {
  return kernel ? kernel->kernel->manifest().spec.headDim : 0;
}
extern "C" int64_t fa_kernel_value_dim(const fa_kernel *kernel) {
  return kernel ? kernel->kernel->manifest().spec.valueDim : 0;
}
extern "C" const char *fa_kernel_name(const fa_kernel *kernel) {
  return kernel ? kernel->kernel->manifest().kernelName.c_str() : "";
}
extern "C" const char *fa_last_error(void) { return lastError.c_str(); }
extern "C" int fa_no_gpu(void) { return lastNoGpu ? 1 : 0; }
