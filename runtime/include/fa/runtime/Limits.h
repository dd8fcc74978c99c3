//===- Limits.h - the ranges fa-mlir accepts, once --------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// The one home of the value ranges every front door checks: the fa dialect's
// verifier, the spec parser (fa-compile, fa-run), the runtime's launch. A
// value outside them is refused with a diagnostic before anything runs;
// docs/dialect.md says why each bound is where it is. Header-only and free
// of MLIR, so the dialect and the runtime both include it.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_LIMITS_H
#define FA_RUNTIME_LIMITS_H

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace fa {
namespace limits {

/// |scale|: the softmax of scale·q·k is meaningful in f32 between these.
/// Below, every score difference rounds away (a uniform softmax whatever
/// the inputs); above, scale·q·k·log2(e) overflows f32 for ordinary q·k
/// and inf − inf turns into NaN.
constexpr double kMinAbsScale = 1e-6;
constexpr double kMaxAbsScale = 1e6;

/// |scale| for the backward, which recomputes P = exp(scale·q·k − LSE) from
/// the forward's f32 LSE: the rounding of scale·q·k and of the LSE (a few
/// f32 ulps of the logits' size) becomes P's relative error, and past this
/// bound it outgrows what 16-bit gradients resolve (docs/dialect.md).
constexpr double kMaxAbsBackwardScale = 100;

/// softcap (0 = off): capped scores lie in (−cap, cap); below kMinSoftcap
/// every capped score rounds to the same f32 softmax weight, above
/// kMaxSoftcap the cap never binds before f32 overflow.
constexpr double kMinSoftcap = 1e-3;
constexpr double kMaxSoftcap = 1e6;

/// Sizes. Every dimension is at least 1. A tensor holds at most 2^45
/// elements (its bytes, at 4 per element, stay under 2^47, inside the
/// 49-bit GPU virtual address space and far from int64 overflow in any
/// offset arithmetic), and a sequence length or window bound at most 2^40
/// (so i + N − M ± bound cannot overflow int64).
constexpr int64_t kMaxTensorElements = int64_t(1) << 45;
constexpr int64_t kMaxSequence = int64_t(1) << 40;

/// A kernel name is a PTX identifier: [A-Za-z_][A-Za-z0-9_$]*, at most
/// this long.
constexpr size_t kMaxKernelName = 256;

/// Block sizes (#fa.tile, pass options, specs): a power of two or a
/// multiple of 16 (whole MMA steps: FA3's 176 and 80 for block_n, 192 for
/// block_m with three consumer warpgroups), at most the longest sequence.
/// Each chip's strategy narrows this to the tiles it builds.
inline bool blockSizeValid(int64_t size) {
  if (size <= 0 || size > kMaxSequence)
    return false;
  bool powerOfTwo = (size & (size - 1)) == 0;
  return powerOfTwo || size % 16 == 0;
}
inline const char *blockSizeRule() {
  return "a power of two or a multiple of 16 in [1, 2^40]";
}

/// The scale and the softcap are f32 values (the op's attributes, the
/// kernels' arithmetic), and 1e-6 has no f32: a value is compared as the
/// f32 it becomes, against the f32 nearest each bound, so that the bounds
/// are inclusive as documented, and a spec's double and the attribute made
/// of it get the same answer.
inline bool inF32Range(double value, double lo, double hi) {
  if (!std::isfinite(value))
    return false;
  float single = static_cast<float>(value);
  return single >= static_cast<float>(lo) && single <= static_cast<float>(hi);
}

inline bool scaleInRange(double scale) {
  return inF32Range(std::fabs(scale), kMinAbsScale, kMaxAbsScale);
}

inline bool backwardScaleInRange(double scale) {
  return scaleInRange(scale) && std::fabs(scale) <= kMaxAbsBackwardScale;
}

inline bool softcapInRange(double softcap) {
  return softcap == 0.0 || inF32Range(softcap, kMinSoftcap, kMaxSoftcap);
}

/// The product of `dims` (each >= 1), or -1 if it exceeds kMaxTensorElements
/// (checked before each multiplication, so nothing overflows).
inline int64_t checkedElements(const int64_t *dims, size_t rank) {
  int64_t product = 1;
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = dims[i];
    if (d < 1 || product > kMaxTensorElements / d)
      return -1;
    product *= d;
  }
  return product;
}
inline int64_t checkedElements(std::initializer_list<int64_t> dims) {
  return checkedElements(dims.begin(), dims.size());
}

inline bool isPtxIdentifier(const std::string &name) {
  if (name.empty() || name.size() > kMaxKernelName)
    return false;
  auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!letter(name[0]))
    return false;
  for (char c : name)
    if (!letter(c) && !(c >= '0' && c <= '9') && c != '$')
      return false;
  return true;
}

} // namespace limits
} // namespace fa

#endif // FA_RUNTIME_LIMITS_H
