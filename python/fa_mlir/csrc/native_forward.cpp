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
// The checks are _ops.py's _check, message for message (the package's
// tests hold both to the same refusals): flash_attn_func's fast path relies
// on them. A refusal raises ValueError and a failed launch RuntimeError,
// each one line, which the package re-raises as FaMlirError. Messages are
// built with std::string, not streams: TORCH_CHECK's message (c10::str,
// an ostringstream) segfaulted formatting an integer in this extension on
// the device (2026-11-25; the same formatting inside libtorch works; the
// cause is not known), and a check's message costs nothing until it fails.
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

/// The pieces of a message, as one string.
void append(std::string &) {}
template <typename T, typename... Rest>
void append(std::string &out, const T &piece, const Rest &...rest) {
  if constexpr (std::is_integral_v<T>)
    out += std::to_string(piece);
  else
    out += piece;
  append(out, rest...);
}

/// Refuses the call with one line (ValueError in Python).
template <typename... Pieces>
[[noreturn]] void refuse(const Pieces &...pieces) {
  std::string message;
  append(message, pieces...);
  throw std::invalid_argument(message);
}

// The message is built only when the check fails (calls are launch-bound).
#define FA_REQUIRE(condition, ...)                                             \
  do {                                                                         \
    if (!(condition))                                                          \
      refuse(__VA_ARGS__);                                                     \
  } while (false)

std::string shapeOf(const at::Tensor &t) {
  std::string text = "(";
  for (int64_t i = 0; i < t.dim(); ++i)
    text += (i ? ", " : "") + std::to_string(t.size(i));
  return text + (t.dim() == 1 ? ",)" : ")");
}

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

void checkInputs(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                 const std::optional<at::Tensor> &alibi) {
  for (auto [name, t] : {std::pair<const char *, const at::Tensor *>{"q", &q},
                         {"k", &k},
                         {"v", &v}}) {
    FA_REQUIRE(t->dim() == 4, "fa_mlir: ", name,
                " must be [batch, seqlen, heads, head_dim], got ", shapeOf(*t));
    FA_REQUIRE(t->is_cuda(), "fa_mlir: ", name, " is on ", t->device().str(),
                "; fa-mlir runs on CUDA devices");
    FA_REQUIRE(t->device() == q.device(), "fa_mlir: ", name, " is on ",
                t->device().str(), ", q on ", q.device().str());
  }
  // libfa_runtime binds device 0's context (runtime/lib/Cuda.cpp).
  FA_REQUIRE(q.device().index() == 0, "fa_mlir: tensors on ", q.device().str(),
              ": the runtime runs on cuda:0 only");
  bool sixteenBit = q.scalar_type() == at::kBFloat16 || q.scalar_type() == at::kHalf;
  FA_REQUIRE(sixteenBit && k.scalar_type() == q.scalar_type() &&
                  v.scalar_type() == q.scalar_type(),
              "fa_mlir: q, k, v must all be bfloat16 or float16, got ",
              dtypeName(q), ", ", dtypeName(k), ", ", dtypeName(v));
  int64_t batch = q.size(0), queryHeads = q.size(2), keyLen = k.size(1),
          kvHeads = k.size(2);
  FA_REQUIRE(k.size(0) == batch && k.size(3) == q.size(3) &&
                  v.size(0) == batch && v.size(1) == keyLen &&
                  v.size(2) == kvHeads,
              "fa_mlir: shapes do not agree: q ", shapeOf(q), ", k ", shapeOf(k),
              ", v ", shapeOf(v));
  FA_REQUIRE(kvHeads != 0 && queryHeads % kvHeads == 0, "fa_mlir: query heads (",
              queryHeads, ") must be a multiple of key/value heads (", kvHeads, ")");
  if (!alibi)
    return;
  FA_REQUIRE(alibi->device() == q.device(), "fa_mlir: alibi_slopes is on ",
              alibi->device().str(), ", q on ", q.device().str());
  bool perHead = alibi->dim() == 1 && alibi->size(0) == queryHeads;
  bool perBatchHead = alibi->dim() == 2 && alibi->size(0) == batch &&
                      alibi->size(1) == queryHeads;
  FA_REQUIRE(alibi->scalar_type() == at::kFloat && (perHead || perBatchHead),
              "fa_mlir: alibi_slopes must be float32 [", queryHeads, "] or [",
              batch, ", ", queryHeads, "], got ", dtypeName(*alibi), " ",
              shapeOf(*alibi));
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
  FA_REQUIRE(kernel != 0, "fa_mlir: no kernel");
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
