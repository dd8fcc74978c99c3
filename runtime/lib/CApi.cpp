//===- CApi.cpp - C API of the fa-mlir runtime ----------------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/fa_runtime.h"

#include "fa/runtime/BackwardKernel.h"
#include "fa/runtime/Cuda.h"
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

/// The runtime's view of the C struct.
static fa::ForwardArgs forwardArgs(const fa_forward_args *a) {
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
  args.qDescale = reinterpret_cast<fa::cuda::CUdeviceptr>(a->q_descale);
  args.kDescale = reinterpret_cast<fa::cuda::CUdeviceptr>(a->k_descale);
  args.vDescale = reinterpret_cast<fa::cuda::CUdeviceptr>(a->v_descale);
  args.descaleStride[0] = a->descale_stride[0];
  args.descaleStride[1] = a->descale_stride[1];
  return args;
}

extern "C" int fa_kernel_forward(const fa_kernel *kernel,
                                 const fa_forward_args *a, void *stream) {
  if (!kernel || !a)
    return fail("fa_kernel_forward: null kernel or args");
  std::string error;
  if (!kernel->kernel->forward(forwardArgs(a),
                               static_cast<fa::cuda::CUstream>(stream), error))
    return fail(error);
  return 0;
}

extern "C" void fa_kernel_free(fa_kernel *kernel) { delete kernel; }

struct fa_backward_kernel {
  std::unique_ptr<fa::BackwardKernel> kernel;
};

extern "C" fa_backward_kernel *
fa_backward_kernel_load(const char *manifestPath) {
  if (!manifestPath) {
    fail("fa_backward_kernel_load: null path");
    return nullptr;
  }
  std::string error;
  bool noDevice = false;
  auto kernel = fa::BackwardKernel::load(manifestPath, error, noDevice);
  if (!kernel) {
    fail(error, noDevice);
    return nullptr;
  }
  lastError.clear();
  return new fa_backward_kernel{std::move(kernel)};
}

extern "C" int64_t fa_backward_workspace_size(const fa_backward_kernel *kernel,
                                              int64_t batch, int64_t qHeads,
                                              int64_t qLen) {
  if (!kernel)
    return fail("fa_backward_workspace_size: null kernel");
  int64_t bytes = kernel->kernel->workspaceBytes(batch, qHeads, qLen);
  if (bytes < 0)
    return fail("fa_backward_workspace_size: sizes must be >= 1 and the dQ "
                "accumulator at most 2^45 elements (got b=" +
                std::to_string(batch) + " hq=" + std::to_string(qHeads) +
                " m=" + std::to_string(qLen) + ")");
  return bytes;
}

extern "C" int fa_kernel_backward(const fa_backward_kernel *kernel,
                                  const fa_backward_args *a, void *stream) {
  // A flag, not a count: 2 is more likely garbage (an args struct older
  // than the field, uninitialised) than a wish. Checked first, as it needs
  // no kernel.
  if (a && a->deterministic != 0 && a->deterministic != 1)
    return fail("fa_kernel_backward: deterministic must be 0 or 1, not " +
                std::to_string(a->deterministic));
  if (!kernel || !a)
    return fail("fa_kernel_backward: null kernel or args");
  fa::BackwardArgs args;
  args.forward = forwardArgs(&a->forward);
  args.gradOut = reinterpret_cast<fa::cuda::CUdeviceptr>(a->d_out);
  args.dq = reinterpret_cast<fa::cuda::CUdeviceptr>(a->dq);
  args.dk = reinterpret_cast<fa::cuda::CUdeviceptr>(a->dk);
  args.dv = reinterpret_cast<fa::cuda::CUdeviceptr>(a->dv);
  for (int i = 0; i < 3; ++i) {
    args.gradOutStride[i] = a->d_out_stride[i];
    args.dqStride[i] = a->dq_stride[i];
    args.dkStride[i] = a->dk_stride[i];
    args.dvStride[i] = a->dv_stride[i];
  }
  args.workspace = reinterpret_cast<fa::cuda::CUdeviceptr>(a->workspace);
  args.deterministic = a->deterministic == 1;
  std::string error;
  if (!kernel->kernel->backward(args, static_cast<fa::cuda::CUstream>(stream),
                                error))
    return fail(error);
  return 0;
}

extern "C" void fa_backward_kernel_free(fa_backward_kernel *kernel) {
  delete kernel;
}

extern "C" int64_t fa_kernel_head_dim(const fa_kernel *kernel) {
  return kernel ? kernel->kernel->manifest().spec.headDim : 0;
}
extern "C" int64_t fa_kernel_value_dim(const fa_kernel *kernel) {
  return kernel ? kernel->kernel->manifest().spec.valueDim : 0;
}
extern "C" const char *fa_kernel_name(const fa_kernel *kernel) {
  return kernel ? kernel->kernel->manifest().kernelName.c_str() : "";
}
extern "C" int64_t fa_device_shared_memory_per_block(void) {
  std::string error;
  bool noDevice = false;
  fa::cuda::Driver *d = fa::cuda::driver(error, noDevice);
  if (!d)
    return fail(error, noDevice);
  int64_t bytes = fa::cuda::sharedMemoryPerBlock(*d, error);
  if (bytes < 0)
    return fail(error);
  lastError.clear();
  return bytes;
}

extern "C" const char *fa_last_error(void) { return lastError.c_str(); }
extern "C" int fa_no_gpu(void) { return lastNoGpu ? 1 : 0; }
