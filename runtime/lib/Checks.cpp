//===- Checks.cpp - a call's tensors as a framework holds them ------------===//
//
// Part of fa-mlir.
//
// fa_check_forward and fa_check_backward (fa_spec.h): the one copy of the
// checks a framework's call makes before it launches (the Python package's
// ctypes path and its C++ launch both call them). The sizes go through
// validateProblem, as every launch's do. Nothing is formatted until a check
// fails: a launch-bound call pays only the comparisons.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Spec.h"

#include <string>

using namespace fa;

namespace {

/// Q, K, V, O and dO's dimensions (batch, seqlen, heads, head_dim) in a
/// layout's order.
struct Layout {
  int batch, seq, heads, dim;
  const char *names;
};

Layout layoutOf(fa_layout layout) {
  if (layout == FA_LAYOUT_BHSD)
    return {0, 2, 1, 3, "[batch, heads, seqlen, head_dim]"};
  return {0, 1, 2, 3, "[batch, seqlen, heads, head_dim]"};
}

std::string shapeText(const int64_t *dims, int64_t rank) {
  std::string text = "[";
  for (int64_t i = 0; i < rank; ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

std::string shapeOf(const fa_tensor_desc &t) {
  return shapeText(t.shape, t.rank);
}

std::string dtypeOf(const fa_tensor_desc &t) {
  if (t.dtype_name)
    return t.dtype_name;
  switch (t.dtype) {
  case FA_DTYPE_F16:
    return "float16";
  case FA_DTYPE_BF16:
    return "bfloat16";
  case FA_DTYPE_F8E4M3FN:
    return "float8_e4m3fn";
  case FA_DTYPE_F32:
    return "float32";
  }
  return "another dtype";
}

std::string deviceOf(const fa_tensor_desc &t) {
  if (t.device >= 0)
    return "cuda:" + std::to_string(t.device);
  return t.device_name ? t.device_name : "a non-CUDA device";
}

/// Each dimension of the layout, of a rank-4 tensor.
struct Dims {
  int64_t batch, seq, heads, dim;
};
Dims dimsOf(const fa_tensor_desc &t, const Layout &l) {
  return {t.shape[l.batch], t.shape[l.seq], t.shape[l.heads], t.shape[l.dim]};
}

/// A rank-4 tensor on a CUDA device, on q's.
bool placed(const char *name, const fa_tensor_desc &t, const fa_tensor_desc &q,
            const Layout &l, std::string &error) {
  if (!t.shape || t.rank != 4) {
    error = std::string(name) + " must be " + l.names + ", got " +
            (t.shape ? shapeOf(t) : "no shape");
    return false;
  }
  if (t.device < 0) {
    error = std::string(name) + " is on " + deviceOf(t) +
            "; fa-mlir runs on CUDA devices";
    return false;
  }
  if (t.device != q.device) {
    error = std::string(name) + " is on " + deviceOf(t) + ", q on " +
            deviceOf(q);
    return false;
  }
  return true;
}

bool sixteenBit(int32_t dtype) {
  return dtype == FA_DTYPE_F16 || dtype == FA_DTYPE_BF16;
}

} // namespace

bool fa::checkForwardTensors(fa_layout layout, const fa_tensor_desc &q,
                             const fa_tensor_desc &k, const fa_tensor_desc &v,
                             const fa_tensor_desc *alibi, std::string &error) {
  if (layout != FA_LAYOUT_BSHD && layout != FA_LAYOUT_BHSD) {
    error = "unknown layout " + std::to_string(layout) +
            " (expected FA_LAYOUT_BSHD or FA_LAYOUT_BHSD)";
    return false;
  }
  Layout l = layoutOf(layout);
  if (!placed("q", q, q, l, error) || !placed("k", k, q, l, error) ||
      !placed("v", v, q, l, error))
    return false;
  // libfa_runtime binds device 0's context (Cuda.cpp).
  if (q.device != 0) {
    error = "tensors on " + deviceOf(q) + ": the runtime runs on cuda:0 only";
    return false;
  }
  if (!sixteenBit(q.dtype) || k.dtype != q.dtype || v.dtype != q.dtype) {
    error = "q, k, v must all be bfloat16 or float16, got " + dtypeOf(q) +
            ", " + dtypeOf(k) + ", " + dtypeOf(v);
    return false;
  }
  Dims dq = dimsOf(q, l), dk = dimsOf(k, l), dv = dimsOf(v, l);
  if (dk.batch != dq.batch || dk.dim != dq.dim || dv.batch != dq.batch ||
      dv.seq != dk.seq || dv.heads != dk.heads) {
    error = "shapes do not agree: q " + shapeOf(q) + ", k " + shapeOf(k) +
            ", v " + shapeOf(v);
    return false;
  }
  AttentionSpec spec;
  spec.headDim = dq.dim;
  spec.valueDim = dv.dim;
  if (!validateProblem(spec, {dq.batch, dq.heads, dk.heads, dq.seq, dk.seq},
                       error))
    return false;
  if (!alibi)
    return true;
  if (alibi->device != q.device) {
    error = "alibi_slopes is on " + deviceOf(*alibi) + ", q on " + deviceOf(q);
    return false;
  }
  bool perHead = alibi->shape && alibi->rank == 1 &&
                 alibi->shape[0] == dq.heads;
  bool perBatchHead = alibi->shape && alibi->rank == 2 &&
                      alibi->shape[0] == dq.batch &&
                      alibi->shape[1] == dq.heads;
  if (alibi->dtype != FA_DTYPE_F32 || !(perHead || perBatchHead)) {
    int64_t both[2] = {dq.batch, dq.heads};
    error = "alibi_slopes must be float32 " + shapeText(&dq.heads, 1) +
            " or " + shapeText(both, 2) + ", got " + dtypeOf(*alibi) + " " +
            (alibi->shape ? shapeOf(*alibi) : "no shape");
    return false;
  }
  return true;
}

bool fa::checkBackwardTensors(fa_layout layout, const fa_tensor_desc &q,
                              const fa_tensor_desc &k, const fa_tensor_desc &v,
                              const fa_tensor_desc *alibi,
                              const fa_tensor_desc &out,
                              const fa_tensor_desc &lse,
                              const fa_tensor_desc &gradOut,
                              std::string &error) {
  if (!checkForwardTensors(layout, q, k, v, alibi, error))
    return false;
  Layout l = layoutOf(layout);
  Dims dq = dimsOf(q, l), dv = dimsOf(v, l);
  // O and dO: q's batch, sequence and heads, v's head_dim, q's dtype.
  int64_t want[4];
  want[l.batch] = dq.batch;
  want[l.seq] = dq.seq;
  want[l.heads] = dq.heads;
  want[l.dim] = dv.dim;
  for (auto [name, t] : {std::pair<const char *, const fa_tensor_desc *>{
                             "out", &out},
                         {"d_out", &gradOut}}) {
    if (!placed(name, *t, q, l, error))
      return false;
    Dims d = dimsOf(*t, l);
    if (t->dtype != q.dtype || d.batch != dq.batch || d.seq != dq.seq ||
        d.heads != dq.heads || d.dim != dv.dim) {
      error = std::string(name) + " must be " + dtypeOf(q) + " " +
              shapeText(want, 4) + " (q's batch, seqlen and heads, v's " +
              "head_dim), got " + dtypeOf(*t) + " " + shapeOf(*t);
      return false;
    }
  }
  int64_t lseShape[3] = {dq.batch, dq.heads, dq.seq};
  if (lse.device != q.device) {
    error = "lse is on " + deviceOf(lse) + ", q on " + deviceOf(q);
    return false;
  }
  if (lse.dtype != FA_DTYPE_F32 || !lse.shape || lse.rank != 3 ||
      lse.shape[0] != lseShape[0] || lse.shape[1] != lseShape[1] ||
      lse.shape[2] != lseShape[2]) {
    error = "lse must be float32 " + shapeText(lseShape, 3) +
            " ([batch, heads, seqlen]), got " + dtypeOf(lse) + " " +
            (lse.shape ? shapeOf(lse) : "no shape");
    return false;
  }
  return true;
}
