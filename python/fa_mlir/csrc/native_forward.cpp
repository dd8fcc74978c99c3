//===- native_forward.cpp - fa_mlir's forward launch as a C++ function ----===//
//
// Part of fa-mlir.
//
// fa_mlir_native.forward(q, k, v, alibi_slopes, kernel) -> (O, LSE): the
// forward of a kernel libfa_runtime already loaded (`kernel` is its
// fa_kernel handle, which the Python package resolves once per spec), on
// PyTorch's current stream, in one C++ call. It exists for launch-bound
// calls: the same work through Python and ctypes costs ~60 us of CPU per
// call (BENCHMARKS.md, the PyTorch package). A pybind11 function, not a
// dispatcher op: a torch.ops call boxes its arguments (~10 us measured);
// torch.compile traces the package's own custom op, which calls this.
//
// Built by fa_mlir/_native.py with torch.utils.cpp_extension on the machine
// that runs it (it needs PyTorch's headers, which the package's build does
// not); without it the package launches through ctypes (_runtime.py).
//
// The checks are the runtime's (fa_check_forward, fa_spec.h), as for
// _ops.py's _check: one copy, so both paths refuse the same calls with the
// same one-line messages. A refusal raises ValueError and a failed launch
// RuntimeError, which the package re-raises as FaMlirError. Messages are
// built with std::string, not streams: TORCH_CHECK's message (c10::str,
// an ostringstream) segfaulted formatting an integer in this extension on
// the device (the same formatting inside libtorch works; the cause is not
// known).
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/fa_runtime.h"

#include <c10/cuda/CUDAStream.h>
#include <torch/extension.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

namespace {

/// The name PyTorch gives a dtype in Python, for the runtime's messages
/// (_ops.py passes str(dtype)).
const char *dtypeName(const at::Tensor &t) {
  switch (t.scalar_type()) {
  case at::kBFloat16:
    return "torch.bfloat16";
  case at::kHalf:
    return "torch.float16";
  case at::kFloat:
    return "torch.float32";
  default:
    return c10::toString(t.scalar_type());
  }
}

int32_t dtypeCode(const at::Tensor &t) {
  switch (t.scalar_type()) {
  case at::kBFloat16:
    return FA_DTYPE_BF16;
  case at::kHalf:
    return FA_DTYPE_F16;
  case at::kFloat:
    return FA_DTYPE_F32;
  default:
    return FA_DTYPE_OTHER;
  }
}

/// The runtime's view of `t` (fa_tensor_desc); `deviceName` holds a
/// non-CUDA device's name (formatted only then) for as long as the view.
fa_tensor_desc describe(const at::Tensor &t, std::string &deviceName) {
  fa_tensor_desc d{};
  d.shape = t.sizes().data();
  d.rank = t.dim();
  d.dtype = dtypeCode(t);
  d.dtype_name = dtypeName(t);
  if (t.is_cuda()) {
    d.device = static_cast<int32_t>(t.get_device());
  } else {
    d.device = -1;
    deviceName = t.device().str();
    d.device_name = deviceName.c_str();
  }
  return d;
}

/// Refuses the call with the runtime's one line (ValueError in Python).
[[noreturn]] void refuse(const char *reason) {
  throw std::invalid_argument(std::string("fa_mlir: ") + reason);
}

void checkInputs(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                 const std::optional<at::Tensor> &alibi) {
  std::string names[4];
  fa_tensor_desc dq = describe(q, names[0]), dk = describe(k, names[1]),
                 dv = describe(v, names[2]), da{};
  if (alibi)
    da = describe(*alibi, names[3]);
  if (fa_check_forward(FA_LAYOUT_BSHD, &dq, &dk, &dv, alibi ? &da : nullptr))
    refuse(fa_last_error());
}

/// `t`, or a contiguous copy where the runtime cannot take its strides (a
/// contiguous last dimension, 16-byte-aligned base and row strides).
at::Tensor usable(const at::Tensor &t) {
  int64_t bytes = t.element_size();
  bool aligned = t.stride(3) == 1 &&
                 reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
  for (int64_t i = 0; i < 3 && aligned; ++i)
    aligned = (t.stride(i) * bytes) % 16 == 0;
  return aligned ? t : t.contiguous();
}

/// (batch, head, sequence) strides of a [B, S, H, W] tensor.
void rowStrides(const at::Tensor &t, int64_t (&stride)[3]) {
  stride[0] = t.stride(0);
  stride[1] = t.stride(2);
  stride[2] = t.stride(1);
}

std::tuple<at::Tensor, at::Tensor>
forward(const at::Tensor &qIn, const at::Tensor &kIn, const at::Tensor &vIn,
        const std::optional<at::Tensor> &alibiIn, int64_t kernel) {
  checkInputs(qIn, kIn, vIn, alibiIn);
  if (kernel == 0)
    refuse("no kernel");
  at::Tensor q = usable(qIn), k = usable(kIn), v = usable(vIn);
  int64_t batch = q.size(0), queryLen = q.size(1), queryHeads = q.size(2);
  at::Tensor out = at::empty({batch, queryLen, queryHeads, v.size(3)}, q.options());
  at::Tensor lse = at::empty({batch, queryHeads, queryLen},
                             q.options().dtype(at::kFloat));
  fa_forward_args a{};
  a.q = q.data_ptr();
  a.k = k.data_ptr();
  a.v = v.data_ptr();
  a.o = out.data_ptr();
  a.lse = lse.data_ptr<float>();
  a.batch = batch;
  a.q_len = queryLen;
  a.q_heads = queryHeads;
  a.kv_len = k.size(1);
  a.kv_heads = k.size(2);
  rowStrides(q, a.q_stride);
  rowStrides(k, a.k_stride);
  rowStrides(v, a.v_stride);
  rowStrides(out, a.o_stride);
  a.lse_stride[0] = lse.stride(0);
  a.lse_stride[1] = lse.stride(1);
  at::Tensor alibi;
  if (alibiIn) {
    alibi = alibiIn->contiguous();
    a.alibi_slopes = alibi.data_ptr<float>();
    a.alibi_stride_b = alibi.dim() == 2 ? alibi.size(1) : 0;
  }
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(q.get_device()).stream();
  if (fa_kernel_forward(reinterpret_cast<const fa_kernel *>(kernel), &a,
                        stream) != 0)
    throw std::runtime_error(std::string("fa_mlir: forward launch: ") +
                             fa_last_error());
  return {out, lse};
}

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("forward", &forward,
        "O and LSE of fa_kernel `kernel` on q, k, v ([B, S, H, D] CUDA "
        "tensors), on the current stream");
}
