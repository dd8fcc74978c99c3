//===- Numerics.h - element types and the tolerance policy ------*- C++ -*-===//
//
// Part of fa-mlir.
//
// Rounding to the kernels' element types (so the reference sees exactly the
// inputs a kernel sees), the naive low-precision attention whose error sets
// the tolerance, and the pass/fail rule of docs/design.md.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_NUMERICS_H
#define FA_RUNTIME_NUMERICS_H

#include "fa/runtime/Reference.h"
#include "fa/runtime/fa_spec.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fa {

/// The values of the C API's fa_dtype (fa_spec.h).
enum class ElementType : int32_t {
  F16 = FA_DTYPE_F16,
  BF16 = FA_DTYPE_BF16,
  F8E4M3FN = FA_DTYPE_F8E4M3FN,
  F32 = FA_DTYPE_F32,
};

/// Parses "f16", "bf16", "f8e4m3fn" or "f32"; false if unknown.
bool parseElementType(const std::string &name, ElementType &type);
const char *elementTypeName(ElementType type);
/// Bytes per element in memory.
size_t elementTypeSize(ElementType type);
/// The type a forward kernel writes O in for inputs of `type`: bf16 for
/// f8E4M3FN (FlashAttention-3's fp8 forward), `type` itself otherwise.
ElementType outputElementType(ElementType type);

/// Bit patterns of the storage formats, round-to-nearest-even.
uint16_t toF16Bits(float value);
float fromF16Bits(uint16_t bits);
uint16_t toBF16Bits(float value);
float fromBF16Bits(uint16_t bits);
/// E4M3FN saturates to +-448 (it has no infinity).
uint8_t toF8E4M3FNBits(float value);
float fromF8E4M3FNBits(uint8_t bits);

/// `value` rounded to `type` and back.
double roundTo(ElementType type, double value);

/// How the naive attention sums Q·Kᵀ's products.
enum class ScoreAccumulation {
  /// In f32 (exactly, then rounded): a CPU, or f16/bf16 tensor cores.
  F32,
  /// As Hopper's e4m3 tensor cores do (wgmma k32): each step aligns its 32
  /// products and the running sum to the largest of them and keeps 13
  /// fraction bits below its leading bit, truncating (an "FP22" adder, about
  /// 2^-13 relative; docs/fp8-plan.md, "Accuracy"). No kernel on those tensor
  /// cores can meet a yardstick that sums in f32: their LSE errs ~1e-4
  /// relative where an f32 sum errs ~1e-7.
  Fp8TensorCore,
};

/// q·k over `width` elements, summed as `accumulation` says (unrounded:
/// the caller rounds to its working type).
double naiveDot(ScoreAccumulation accumulation, const double *query,
                const double *key, int64_t width);

/// Naive attention in the input precision: scores, probabilities and the
/// output are each rounded to `type`, as a framework's unfused
/// matmul-softmax-matmul in that dtype would. Its error against the float64
/// reference is the yardstick of the tolerance policy.
ref::ForwardResult naiveForward(ElementType type, const ref::Problem &problem,
                                const std::vector<double> &query,
                                const std::vector<double> &key,
                                const std::vector<double> &value,
                                ScoreAccumulation accumulation =
                                    ScoreAccumulation::F32);

/// One row of naiveForward: O[b,h,i,:] into `outputRow`, and its LSE.
void naiveForwardRow(ElementType type, const ref::Problem &problem,
                     const double *query, const double *key,
                     const double *value, int64_t b, int64_t h, int64_t i,
                     double *outputRow, double *lse,
                     ScoreAccumulation accumulation = ScoreAccumulation::F32);

/// Naive backward in the input precision: P, dP, dS and the gradients are
/// rounded to `type`, as an unfused framework backward in that dtype would.
ref::BackwardResult naiveBackward(ElementType type,
                                  const ref::Problem &problem,
                                  const std::vector<double> &query,
                                  const std::vector<double> &key,
                                  const std::vector<double> &value,
                                  const std::vector<double> &gradOutput);

/// How far `actual` is from `expected`.
struct ErrorStats {
  double maxAbs = 0.0;       ///< max |actual - expected| over finite pairs.
  double relative = 0.0;     ///< ||actual - expected||_2 / ||expected||_2.
  size_t worstIndex = 0;     ///< Where maxAbs is reached.
  size_t nonFinite = 0;      ///< NaNs, or infinities the reference lacks.
  size_t firstNonFinite = 0; ///< Index of the first of those.
};

/// Compares elementwise. Equal infinities (LSE = -inf on a fully masked row)
/// count as exact; a NaN, or an infinity where the reference is finite, is
/// counted in `nonFinite` and always fails.
ErrorStats compare(const double *actual, const double *expected, size_t count);
ErrorStats compare(const std::vector<double> &actual,
                   const std::vector<double> &expected);

/// The verification policy (docs/design.md): err(kernel) <= 2 * err(naive)
/// + 1e-5, and no NaN; never below `floor`, the error the kernel's f32
/// arithmetic alone may make where the naive attention's rounding cancels
/// exactly (gradientRoundingFloors, Verify.h).
bool withinTolerance(const ErrorStats &kernel, const ErrorStats &naive,
                     double floor = 0.0);
/// The bound that policy allows.
double toleranceBound(const ErrorStats &naive, double floor = 0.0);

} // namespace fa

#endif // FA_RUNTIME_NUMERICS_H
