//===- CApi.cpp - C API of the fa-mlir runtime ----------------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/fa_runtime.h"

#include "fa/runtime/BackwardKernel.h"
#include "fa/runtime/Cuda.h"
#include "fa/runtime/Kernel.h"
#include "fa/runtime/Spec.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

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

extern "C" int64_t fa_kernel_num_captures(const fa_kernel *kernel) {
  if (!kernel)
    return fail("fa_kernel_num_captures: null kernel");
  return static_cast<int64_t>(
      kernel->kernel->manifest().variant.captures.size());
}

/// `n` C captures into `args`; false (the reason set) on a bad one.
static bool addCaptures(fa::ForwardArgs &args, const fa_capture *captures,
                        int64_t n, const char *entry) {
  for (int64_t i = 0; i < n; ++i) {
    const fa_capture &c = captures[i];
    if (c.rank < 0 || c.rank > 8 || (c.rank > 0 && !c.extents)) {
      fail(std::string(entry) + ": capture " + std::to_string(i) +
           " has a rank outside [0, 8] or no extents");
      return false;
    }
    fa::ForwardArgs::Capture capture;
    capture.data = reinterpret_cast<fa::cuda::CUdeviceptr>(c.data);
    capture.extents.assign(c.extents, c.extents + c.rank);
    capture.real = c.real;
    capture.integer = c.integer;
    args.captures.push_back(std::move(capture));
  }
  return true;
}

extern "C" int fa_kernel_forward_captures(const fa_kernel *kernel,
                                          const fa_forward_args *a,
                                          const fa_capture *captures,
                                          int64_t numCaptures, void *stream) {
  return fa_kernel_forward_sparse(kernel, a, captures, numCaptures, nullptr,
                                  stream);
}

extern "C" int fa_kernel_block_sparse(const fa_kernel *kernel,
                                      int64_t *qBlockSize, int64_t *kvBlockSize) {
  if (!kernel)
    return fail("fa_kernel_block_sparse: null kernel");
  const fa::Manifest &m = kernel->kernel->manifest();
  if (qBlockSize)
    *qBlockSize = m.sparseQBlock;
  if (kvBlockSize)
    *kvBlockSize = m.sparseKvBlock;
  return m.blockSparse() ? 1 : 0;
}

extern "C" int fa_kernel_forward_sparse(const fa_kernel *kernel,
                                        const fa_forward_args *a,
                                        const fa_capture *captures,
                                        int64_t numCaptures,
                                        const fa_block_mask *blockMask,
                                        void *stream) {
  if (!kernel || !a || (numCaptures > 0 && !captures) || numCaptures < 0 ||
      numCaptures > 4096)
    return fail("fa_kernel_forward_captures: null kernel, args or captures, "
                "or a capture count outside [0, 4096]");
  fa::ForwardArgs args = forwardArgs(a);
  if (!addCaptures(args, captures, numCaptures, "fa_kernel_forward_captures"))
    return -1;
  if (blockMask) {
    auto ptr = [](const int32_t *p) { return reinterpret_cast<fa::cuda::CUdeviceptr>(p); };
    const fa_block_mask &m = *blockMask;
    args.blockMask = {ptr(m.kv_num_blocks), ptr(m.kv_indices),
                      ptr(m.full_kv_num_blocks), ptr(m.full_kv_indices),
                      m.batch, m.heads, m.q_blocks, m.kv_blocks,
                      m.q_block_size, m.kv_block_size};
  }
  std::string error;
  if (!kernel->kernel->forward(args, static_cast<fa::cuda::CUstream>(stream),
                               error))
    return fail(error);
  return 0;
}

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
  return fa_kernel_backward_captures(kernel, a, nullptr, 0, stream);
}

extern "C" int fa_kernel_backward_captures(const fa_backward_kernel *kernel,
                                           const fa_backward_args *a,
                                           const fa_capture *captures,
                                           int64_t numCaptures, void *stream) {
  // A flag, not a count: 2 is more likely garbage (an args struct older
  // than the field, uninitialised) than a wish. Checked first, as it needs
  // no kernel.
  if (a && a->deterministic != 0 && a->deterministic != 1)
    return fail("fa_kernel_backward: deterministic must be 0 or 1, not " +
                std::to_string(a->deterministic));
  if (!kernel || !a)
    return fail("fa_kernel_backward: null kernel or args");
  if ((numCaptures > 0 && !captures) || numCaptures < 0 || numCaptures > 4096)
    return fail("fa_kernel_backward_captures: null captures, or a capture "
                "count outside [0, 4096]");
  fa::BackwardArgs args;
  args.forward = forwardArgs(&a->forward);
  if (!addCaptures(args.forward, captures, numCaptures,
                   "fa_kernel_backward_captures"))
    return -1;
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

//===----------------------------------------------------------------------===//
// The spec language and the call checks (fa_spec.h)
//===----------------------------------------------------------------------===//

namespace {
/// The C struct of `spec`, its unstated blocks 0.
void specToC(const fa::AttentionSpec &spec, bool blockMStated,
             bool blockNStated, fa_spec &out) {
  out.head_dim = spec.headDim;
  out.value_dim = spec.valueDim;
  out.dtype = static_cast<int32_t>(spec.dtype);
  out.mask = static_cast<int32_t>(spec.mask.kind);
  out.window_left = spec.mask.left;
  out.window_right = spec.mask.right;
  out.scale = spec.scale ? *spec.scale : 0.0;
  out.softcap = spec.softcap;
  out.alibi = static_cast<int32_t>(spec.alibi);
  out.descale = static_cast<int32_t>(spec.descale);
  out.block_m = blockMStated ? spec.blockM : 0;
  out.block_n = blockNStated ? spec.blockN : 0;
}

/// The runtime's spec of the C struct (a zero scale unset, an unstated
/// block the default) and which blocks it states; false with the reason
/// for an enumerator that is none of its enum's. The ranges are checkSpec's
/// to check.
bool specOfC(const fa_spec &in, fa::AttentionSpec &spec, bool &blockMStated,
             bool &blockNStated, std::string &error) {
  auto enumerator = [&](const char *field, int32_t value, int32_t last) {
    if (value >= 0 && value <= last)
      return true;
    error = std::string("fa_spec.") + field + " is " + std::to_string(value) +
            ", not one of its enum's (0 to " + std::to_string(last) + ")";
    return false;
  };
  if (!enumerator("dtype", in.dtype, FA_DTYPE_F8E4M3FN) ||
      !enumerator("mask", in.mask, FA_MASK_WINDOW) ||
      !enumerator("alibi", in.alibi, FA_ALIBI_BATCH_HEAD) ||
      !enumerator("descale", in.descale, FA_DESCALE_HEAD))
    return false;
  spec = fa::AttentionSpec();
  spec.headDim = in.head_dim;
  spec.valueDim = in.value_dim;
  spec.dtype = static_cast<fa::ElementType>(in.dtype);
  spec.mask = {static_cast<fa::MaskKind>(in.mask), in.window_left,
               in.window_right};
  if (in.scale != 0.0)
    spec.scale = in.scale;
  spec.softcap = in.softcap;
  spec.alibi = static_cast<fa::AlibiKind>(in.alibi);
  spec.descale = static_cast<fa::DescaleKind>(in.descale);
  blockMStated = in.block_m != 0;
  blockNStated = in.block_n != 0;
  if (blockMStated)
    spec.blockM = in.block_m;
  if (blockNStated)
    spec.blockN = in.block_n;
  return true;
}

/// `spec` resolved (Dv = D where 0) and checked; false (the reason in
/// lastError) if refused.
bool checkedSpec(const char *function, const fa_spec *in,
                 fa::AttentionSpec &spec, bool &blockMStated,
                 bool &blockNStated) {
  std::string error;
  if (!in)
    error = std::string(function) + ": null spec";
  else if (specOfC(*in, spec, blockMStated, blockNStated, error)) {
    if (spec.valueDim == 0)
      spec.valueDim = spec.headDim;
    if (fa::checkSpec(spec, error))
      return true;
  }
  fail(error);
  return false;
}
} // namespace

extern "C" void fa_spec_init(fa_spec *spec) {
  if (spec)
    specToC(fa::AttentionSpec(), false, false, *spec);
}

extern "C" int fa_spec_parse(const char *text, fa_spec *spec) {
  if (!text || !spec)
    return fail("fa_spec_parse: null text or spec");
  fa::AttentionSpec parsed;
  std::string error;
  std::vector<std::string> keys;
  if (!fa::parseSpec(text, parsed, error, &keys))
    return fail(error);
  auto stated = [&](const char *key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
  parsed.scale = parsed.scaleOrDefault();
  specToC(parsed, stated("block_m"), stated("block_n"), *spec);
  lastError.clear();
  return 0;
}

extern "C" int fa_spec_set(fa_spec *spec, const char *key, const char *value) {
  if (!spec || !key || !value)
    return fail("fa_spec_set: null spec, key or value");
  // Through the runtime's spec, so that each key is read as parseSpec
  // reads it; the other fields come back as they were, zeros included.
  fa::AttentionSpec parsed;
  bool blockMStated = false, blockNStated = false;
  std::string error;
  if (!specOfC(*spec, parsed, blockMStated, blockNStated, error) ||
      !fa::setSpecValue(parsed, key, value, error))
    return fail(error);
  std::string name = key;
  specToC(parsed, blockMStated || name == "block_m",
          blockNStated || name == "block_n", *spec);
  lastError.clear();
  return 0;
}

extern "C" int fa_spec_check(const fa_spec *spec) {
  fa::AttentionSpec checked;
  bool blockMStated = false, blockNStated = false;
  if (!checkedSpec("fa_spec_check", spec, checked, blockMStated, blockNStated))
    return -1;
  lastError.clear();
  return 0;
}

extern "C" int fa_spec_check_backward(const fa_spec *spec) {
  fa::AttentionSpec checked;
  bool blockMStated = false, blockNStated = false;
  if (!checkedSpec("fa_spec_check_backward", spec, checked, blockMStated,
                   blockNStated))
    return -1;
  std::string error;
  if (!fa::checkBackwardSpec(checked, error))
    return fail(error);
  lastError.clear();
  return 0;
}

extern "C" int64_t fa_spec_format(const fa_spec *spec, char *text,
                                  int64_t capacity) {
  fa::AttentionSpec checked;
  bool blockMStated = false, blockNStated = false;
  if (!checkedSpec("fa_spec_format", spec, checked, blockMStated,
                   blockNStated))
    return -1;
  std::string formatted = fa::specText(checked, blockMStated, blockNStated);
  int64_t length = static_cast<int64_t>(formatted.size());
  if (text && capacity > length)
    std::memcpy(text, formatted.c_str(), formatted.size() + 1);
  lastError.clear();
  return length;
}

extern "C" int fa_check_forward(int32_t layout, const fa_tensor_desc *q,
                                const fa_tensor_desc *k,
                                const fa_tensor_desc *v,
                                const fa_tensor_desc *alibiSlopes) {
  if (!q || !k || !v)
    return fail("fa_check_forward: null q, k or v");
  std::string error;
  if (!fa::checkForwardTensors(static_cast<fa_layout>(layout), *q, *k, *v,
                               alibiSlopes, error))
    return fail(error);
  return 0;
}

extern "C" int fa_check_backward(int32_t layout, const fa_tensor_desc *q,
                                 const fa_tensor_desc *k,
                                 const fa_tensor_desc *v,
                                 const fa_tensor_desc *alibiSlopes,
                                 const fa_tensor_desc *out,
                                 const fa_tensor_desc *lse,
                                 const fa_tensor_desc *gradOut) {
  if (!q || !k || !v || !out || !lse || !gradOut)
    return fail("fa_check_backward: null q, k, v, out, lse or d_out");
  std::string error;
  if (!fa::checkBackwardTensors(static_cast<fa_layout>(layout), *q, *k, *v,
                                alibiSlopes, *out, *lse, *gradOut, error))
    return fail(error);
  return 0;
}

extern "C" const char *fa_last_error(void) { return lastError.c_str(); }
extern "C" int fa_no_gpu(void) { return lastNoGpu ? 1 : 0; }
