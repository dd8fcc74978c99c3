//===- VerifyTest.cpp - the checks' rounding floors ----------------------===//
//
// Part of fa-mlir.
//
// A row that sees one key has P = 1 and O = V, so dS = P (dP - D) is zero
// in exact arithmetic and the naive attention's dS, rounding dP and D
// alike, is exactly zero too: its error bounds nothing there. A kernel
// sums dP and D in f32 in different orders and leaves their rounding. The
// check must pass that kernel on its rounding floor and still fail one
// that drops D (the no-row-dot control). Likewise an f32 LSE of 1e7 is
// off by its ulps however it is computed: the LSE check passes that on
// its floor and still fails an LSE a thousand times further off.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Verify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace fa;

namespace {

/// Inputs of `p` drawn normal and rounded to f16.
BackwardData drawInputs(const ref::Problem &p, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  auto draw = [&](int64_t count) {
    std::vector<double> values(count);
    for (double &v : values)
      v = roundTo(ElementType::F16, normal(gen));
    return values;
  };
  BackwardData data;
  data.query = draw(p.batch * p.queryHeads * p.queryLen * p.headDim);
  data.key = draw(p.batch * p.kvHeads * p.keyLen * p.headDim);
  data.value = draw(p.batch * p.kvHeads * p.keyLen * p.valueDim);
  data.gradOutput = draw(p.batch * p.queryHeads * p.queryLen * p.valueDim);
  return data;
}

/// The backward of a one-key problem (P = 1, O = V) as a kernel computes
/// it in f32: dP = dO·V summed forwards, D = dO·O summed backwards (another
/// order), dS = dP - D (`withRowDot`; else dS = dP, the negative control),
/// dQ, dK and dV accumulated in f32.
void oneKeyKernel(const ref::Problem &p, BackwardData &data, bool withRowDot) {
  int64_t M = p.queryLen, D = p.headDim, Dv = p.valueDim;
  std::vector<float> gradKey(D, 0.0f), gradValue(Dv, 0.0f);
  data.gradQuery.assign(M * D, 0.0);
  for (int64_t i = 0; i < M; ++i) {
    const double *dO = &data.gradOutput[i * Dv];
    float gradProb = 0.0f, rowDot = 0.0f;
    for (int64_t e = 0; e < Dv; ++e)
      gradProb += float(dO[e]) * float(data.value[e]);
    for (int64_t e = Dv - 1; e >= 0; --e)
      rowDot += float(dO[e]) * float(data.value[e]);
    float gradScore = (withRowDot ? gradProb - rowDot : gradProb) * float(p.scale);
    for (int64_t d = 0; d < D; ++d) {
      data.gradQuery[i * D + d] = gradScore * float(data.key[d]);
      gradKey[d] += gradScore * float(data.query[i * D + d]);
    }
    for (int64_t e = 0; e < Dv; ++e)
      gradValue[e] += float(dO[e]);
  }
  data.gradKey.assign(gradKey.begin(), gradKey.end());
  data.gradValue.assign(gradValue.begin(), gradValue.end());
}

ref::Problem oneKeyProblem() {
  ref::Problem p;
  p.queryLen = 239;
  p.keyLen = 1;
  p.headDim = p.valueDim = 128;
  p.scale = 1.0 / std::sqrt(128.0);
  return p;
}

TEST(VerifyBackward, OneKeyRowsPassOnTheRoundingFloor) {
  ref::Problem p = oneKeyProblem();
  BackwardData data = drawInputs(p, 239);
  oneKeyKernel(p, data, /*withRowDot=*/true);
  VerifyReport report = verifyBackward(ElementType::F16, p, data);
  ASSERT_EQ(report.checks.size(), 3u);
  const TensorCheck &dK = report.checks[1];
  // The naive attention's dS cancels exactly: its error bounds nothing.
  EXPECT_EQ(dK.naive.maxAbs, 0.0);
  // The f32 rounding is there, above the bare 1e-5, and within the floor.
  EXPECT_GT(dK.kernel.maxAbs, 0.0);
  EXPECT_GT(dK.floor, 1e-5);
  EXPECT_TRUE(report.pass()) << report.format();
}

TEST(VerifyBackward, OneKeyRowsStillCatchTheMissingRowDot) {
  ref::Problem p = oneKeyProblem();
  BackwardData data = drawInputs(p, 240);
  oneKeyKernel(p, data, /*withRowDot=*/false);
  VerifyReport report = verifyBackward(ElementType::F16, p, data);
  EXPECT_FALSE(report.pass()) << report.format();
  EXPECT_FALSE(report.checks[0].pass); // dQ
  EXPECT_FALSE(report.checks[1].pass); // dK
}

TEST(VerifyBackward, FloorIsBelowTheNaiveBoundWhereTheNaiveIsMeaningful) {
  // Many keys: the naive attention's f16 rounding dominates f32's, and the
  // floor leaves the bound as the policy states it.
  ref::Problem p;
  p.queryLen = 64;
  p.keyLen = 80;
  p.headDim = p.valueDim = 64;
  p.scale = 0.125;
  BackwardData data = drawInputs(p, 64);
  ref::BackwardResult naive = naiveBackward(ElementType::F16, p, data.query,
                                            data.key, data.value,
                                            data.gradOutput);
  ref::BackwardResult exact =
      ref::backward(p, data.query, data.key, data.value, data.gradOutput);
  GradientFloors floors = gradientRoundingFloors(p, data.query, data.key,
                                                 data.value, data.gradOutput);
  ErrorStats naiveQuery = compare(naive.gradQuery, exact.gradQuery);
  ErrorStats naiveKey = compare(naive.gradKey, exact.gradKey);
  EXPECT_GT(floors.gradQuery, 0.0);
  EXPECT_LT(floors.gradQuery, toleranceBound(naiveQuery));
  EXPECT_LT(floors.gradKey, toleranceBound(naiveKey));
  EXPECT_EQ(toleranceBound(naiveKey, floors.gradKey), toleranceBound(naiveKey));
}

/// The forward at |scale| = 1e6 in f32: the reference's LSE, rounded to
/// f32 and moved by a few ulps (as an f32 kernel leaves it), against the
/// same LSE moved by a thousand times more.
ForwardData largeLogitForward(const ref::Problem &p, double ulpsOff) {
  BackwardData inputs = drawInputs(p, 1000);
  ForwardData data{inputs.query, inputs.key, inputs.value, {}, {}};
  ref::ForwardResult exact = ref::forward(p, data.query, data.key, data.value);
  data.output = exact.output;
  for (double lse : exact.lse) {
    float rounded = float(lse);
    data.lse.push_back(double(rounded) +
                       ulpsOff * std::fabs(double(rounded)) * 0x1p-24);
  }
  return data;
}

ref::Problem largeLogitProblem() {
  ref::Problem p;
  p.queryLen = p.keyLen = 48;
  p.headDim = p.valueDim = 64;
  p.scale = 1e6;
  return p;
}

TEST(VerifyForward, LargeLogitLsePassesOnItsRoundingFloor) {
  ref::Problem p = largeLogitProblem();
  VerifyReport report = verifyForward(ElementType::F32, p,
                                      largeLogitForward(p, /*ulpsOff=*/3.0));
  ASSERT_EQ(report.checks.size(), 2u);
  const TensorCheck &lse = report.checks[1];
  // An LSE of ~1e7 off by its ulps: far past the bare 1e-5, within the
  // floor.
  EXPECT_GT(lse.kernel.maxAbs, 1e-5);
  EXPECT_GT(lse.floor, lse.kernel.maxAbs);
  EXPECT_TRUE(report.pass()) << report.format();
}

TEST(VerifyForward, LargeLogitLseStillCatchesAWrongLse) {
  ref::Problem p = largeLogitProblem();
  VerifyReport report = verifyForward(ElementType::F32, p,
                                      largeLogitForward(p, /*ulpsOff=*/3000.0));
  EXPECT_FALSE(report.checks[1].pass) << report.format();
}

TEST(VerifyForward, LseFloorLeavesTheBoundAloneAtOrdinaryScales) {
  // f16 inputs at scale 1/sqrt(D): the naive attention's rounding dominates
  // f32's, and the floor leaves the bound as the policy states it.
  ref::Problem p = largeLogitProblem();
  p.scale = 0.125;
  BackwardData inputs = drawInputs(p, 7);
  ForwardData data{inputs.query, inputs.key, inputs.value, {}, {}};
  ref::ForwardResult exact = ref::forward(p, data.query, data.key, data.value);
  data.output = exact.output;
  data.lse = exact.lse;
  VerifyReport report = verifyForward(ElementType::F16, p, data);
  ASSERT_EQ(report.checks.size(), 2u);
  const TensorCheck &lse = report.checks[1];
  EXPECT_GT(lse.floor, 0.0);
  EXPECT_LT(lse.floor, toleranceBound(lse.naive));
  EXPECT_EQ(toleranceBound(lse.naive, lse.floor), toleranceBound(lse.naive));
}

} // namespace
