//===- Verify.h - checking kernel outputs against the reference -*- C++ -*-===//
//
// Part of fa-mlir.
//
// docs/design.md's verification policy in one place, shared by every device of
// fa-run: outputs against the float64 reference, each bounded by twice the
// error of a naive attention in the input precision (plus 1e-5), NaN never
// passing. Large problems are checked on sampled rows.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_VERIFY_H
#define FA_RUNTIME_VERIFY_H

#include "fa/runtime/Numerics.h"
#include "fa/runtime/Reference.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fa {

/// The verdict on one output tensor.
struct TensorCheck {
  std::string name;
  ErrorStats kernel; ///< kernel vs float64 reference
  ErrorStats naive;  ///< naive low-precision attention vs the reference
  /// With ScoreAccumulation::Fp8TensorCore: the max error of the naive
  /// attention that sums Q·Kᵀ in f32 (shown beside, not the verdict's).
  double f32NaiveMaxAbs = -1.0;
  /// The f32 rounding floor under the bound (gradientRoundingFloors); 0
  /// where the naive attention's error is the whole yardstick.
  double floor = 0.0;
  bool pass = false;
  std::string worstWhere; ///< "[b, h, i, e]" of the largest error or a NaN
};

struct VerifyReport {
  std::vector<TensorCheck> checks;
  size_t rowsChecked = 0, rowsTotal = 0;
  bool pass() const;
  /// One line per tensor plus the verdict, as fa-run prints it.
  std::string format() const;
};

/// Inputs and the kernel's outputs of one forward pass, as doubles holding
/// exactly the stored values. Layout: dense [B, H, S, W].
struct ForwardData {
  std::vector<double> query, key, value, output, lse;
};

/// Verifies O and LSE (O alone where `data.lse` is empty: a forward that
/// computes none). `rows` lists flat query rows (b·Hq·M + h·M + i) to
/// check; empty means every row. `accumulation` says how the yardstick
/// (the naive attention) sums Q·Kᵀ: as the kernel's matmul unit can.
VerifyReport verifyForward(ElementType type, const ref::Problem &problem,
                           const ForwardData &data,
                           const std::vector<int64_t> &rows = {},
                           ScoreAccumulation accumulation =
                               ScoreAccumulation::F32);

/// The largest error f32 arithmetic alone may leave in the LSE of row
/// `row` (flat b·Hq·M + h·M + i), given its reference LSE and probabilities
/// (as ref::forwardRow leaves them): the kernel's LSE is an f32 function of
/// f32 logits, so past the naive attention's (which rounds its own way) it
/// carries a few ulps of |LSE| and, weighted by P_ij, each logit's
/// dot-product error lambda sqrt(D) u |scale| sum |q k| (u = 2^-24,
/// lambda = 6), plus a few of each logit's own ulps |s_ij|. Below the naive
/// attention's bound at ordinary scales; what lets a large-magnitude LSE
/// pass (docs/design.md). 0 for a row with no visible key.
double lseRoundingFloor(const ref::Problem &problem,
                        const std::vector<double> &query,
                        const std::vector<double> &key, int64_t row,
                        double lse, const std::vector<double> &probs);

struct BackwardData {
  std::vector<double> query, key, value, gradOutput;
  std::vector<double> gradQuery, gradKey, gradValue;
};

/// The largest error f32 arithmetic alone may leave in any element of dQ
/// and dK: dS = P (dP - D) subtracts two f32 dot products over Dv that are
/// equal in exact arithmetic wherever a row sees one key (P = 1, O = V), so
/// their rounding survives alone while the naive attention, rounding both
/// alike, cancels to 0 and bounds nothing. Per row, each dot product's
/// error is bounded as lambda sqrt(Dv) u sum |terms| (u = 2^-24, lambda =
/// 6: the probabilistic bound, failing with probability under
/// 2 Dv exp(-18)); summed over the rows that reach the element.
struct GradientFloors {
  double gradQuery = 0.0, gradKey = 0.0;
};
GradientFloors gradientRoundingFloors(const ref::Problem &problem,
                                      const std::vector<double> &query,
                                      const std::vector<double> &key,
                                      const std::vector<double> &value,
                                      const std::vector<double> &gradOutput);

/// Verifies dQ, dK and dV in full; dQ and dK against the larger of their
/// tolerance bound and their rounding floor (gradientRoundingFloors).
VerifyReport verifyBackward(ElementType type, const ref::Problem &problem,
                            const BackwardData &data);

/// At least `count` query rows spread over the problem, always including
/// the first and last row of every Q block of `blockM` rows in some head,
/// the last row M-1, and rows whose visible keys end inside a KV block of
/// `blockN` (when the mask makes that happen); the rest at random.
std::vector<int64_t> sampleRows(const ref::Problem &problem, int64_t blockM,
                                int64_t blockN, size_t count, uint64_t seed);

} // namespace fa

#endif // FA_RUNTIME_VERIFY_H
