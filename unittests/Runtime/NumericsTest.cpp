//===- NumericsTest.cpp - storage formats and the tolerance policy --------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Numerics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace fa;

namespace {

TEST(Formats, KnownBitPatterns) {
  EXPECT_EQ(toF16Bits(1.0f), 0x3C00);
  EXPECT_EQ(toF16Bits(-2.0f), 0xC000);
  EXPECT_EQ(toF16Bits(65504.0f), 0x7BFF);
  EXPECT_EQ(toF16Bits(1e6f), 0x7C00);          // Overflows to +inf.
  EXPECT_EQ(toF16Bits(5.960464e-8f), 0x0001);  // Smallest subnormal.
  EXPECT_EQ(toBF16Bits(1.0f), 0x3F80);
  EXPECT_EQ(toBF16Bits(-3.0f), 0xC040);
  EXPECT_EQ(toF8E4M3FNBits(1.0f), 0x38);
  EXPECT_EQ(toF8E4M3FNBits(448.0f), 0x7E);
  EXPECT_EQ(toF8E4M3FNBits(1e4f), 0x7E);       // Saturates, no infinity.
  EXPECT_EQ(toF8E4M3FNBits(-0.001953125f), 0x81); // Smallest subnormal 2^-9.
}

TEST(Formats, RoundToNearestEven) {
  // 1 + 2^-11 is halfway between f16 1.0 and 1 + 2^-10: ties go to even (1.0).
  EXPECT_EQ(toF16Bits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(toF16Bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // bf16 keeps 7 mantissa bits: 1 + 2^-8 ties to 1.0.
  EXPECT_EQ(toBF16Bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(toBF16Bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
}

TEST(Formats, RoundTripIsExactOnRepresentableValues) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float f16 = fromF16Bits(static_cast<uint16_t>(bits));
    if (std::isfinite(f16)) {
      ASSERT_EQ(toF16Bits(f16), bits) << std::hex << bits;
    }
    float bf16 = fromBF16Bits(static_cast<uint16_t>(bits));
    if (std::isfinite(bf16)) {
      ASSERT_EQ(toBF16Bits(bf16), bits) << std::hex << bits;
    }
  }
  for (uint32_t bits = 0; bits < 0x100; ++bits) {
    float f8 = fromF8E4M3FNBits(static_cast<uint8_t>(bits));
    if (!std::isnan(f8)) {
      ASSERT_EQ(toF8E4M3FNBits(f8), bits) << std::hex << bits;
    }
  }
}

TEST(Compare, MinusInfinityMatchesButNaNNeverPasses) {
  double inf = std::numeric_limits<double>::infinity();
  std::vector<double> expected = {1.0, -inf, 2.0};
  ErrorStats same = compare(std::vector<double>{1.0, -inf, 2.0}, expected);
  EXPECT_EQ(same.nonFinite, 0u);
  EXPECT_EQ(same.maxAbs, 0.0);
  ErrorStats nan = compare(std::vector<double>{1.0, -inf, NAN}, expected);
  EXPECT_EQ(nan.nonFinite, 1u);
  EXPECT_EQ(nan.firstNonFinite, 2u);
  EXPECT_FALSE(withinTolerance(nan, same));
  ErrorStats infWhereFinite =
      compare(std::vector<double>{inf, -inf, 2.0}, expected);
  EXPECT_EQ(infWhereFinite.nonFinite, 1u);
}

TEST(Tolerance, PolicyBoundIsTwiceNaivePlusEpsilon) {
  ErrorStats naive;
  naive.maxAbs = 0.01;
  ErrorStats kernel;
  kernel.maxAbs = 0.02;
  EXPECT_TRUE(withinTolerance(kernel, naive));
  kernel.maxAbs = 0.0200101;
  EXPECT_FALSE(withinTolerance(kernel, naive));
}

/// A small problem (one KV head, D = Dv = 16, scale 1/4) of `queryHeads`
/// heads, and N(0, 1) draws rounded to `type`.
ref::Problem smallProblem(int64_t queryHeads, int64_t queryLen, int64_t keyLen) {
  ref::Problem p;
  p.batch = 1;
  p.queryHeads = queryHeads;
  p.kvHeads = 1;
  p.queryLen = queryLen;
  p.keyLen = keyLen;
  p.headDim = 16;
  p.valueDim = 16;
  p.scale = 0.25;
  return p;
}
std::vector<double> drawRounded(ElementType type, size_t count, std::mt19937 &gen) {
  std::normal_distribution<double> normal;
  std::vector<double> x(count);
  for (double &value : x)
    value = roundTo(type, normal(gen));
  return x;
}

/// The naive fp8 attention (the e4m3 yardstick) rounds P to e4m3 and O to
/// bf16: its output lies on the bf16 grid, and it errs more than the same
/// inputs' naive bf16 attention, which keeps P in bf16.
TEST(Tolerance, NaiveFp8RoundsProbabilitiesToE4M3) {
  ref::Problem p = smallProblem(1, 20, 50);
  std::mt19937 gen(3);
  auto draw = [&](size_t count) { return drawRounded(ElementType::F8E4M3FN, count, gen); };
  std::vector<double> q = draw(20 * 16), k = draw(50 * 16), v = draw(50 * 16);
  ref::ForwardResult exact = ref::forward(p, q, k, v);
  ref::ForwardResult fp8 = naiveForward(ElementType::F8E4M3FN, p, q, k, v);
  ref::ForwardResult bf16 = naiveForward(ElementType::BF16, p, q, k, v);
  for (double x : fp8.output)
    EXPECT_EQ(x, roundTo(ElementType::BF16, x));
  EXPECT_GT(compare(fp8.output, exact.output).maxAbs,
            compare(bf16.output, exact.output).maxAbs);
}

/// The e4m3 tensor-core sum (ScoreAccumulation::Fp8TensorCore) errs about
/// 2^-13 of the largest term per k32 step, never more than one unit per
/// term, truncating toward zero: on positive products it never exceeds the
/// exact sum, and it is far from the f32 sum's ~1e-7.
TEST(Tolerance, Fp8TensorCoreSumKeepsThirteenBits) {
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> magnitude(0.0, 448.0);
  double worst = 0.0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> q(128), k(128);
    for (int d = 0; d < 128; ++d) {
      q[d] = roundTo(ElementType::F8E4M3FN, magnitude(gen));
      k[d] = roundTo(ElementType::F8E4M3FN, magnitude(gen));
    }
    double exact = naiveDot(ScoreAccumulation::F32, q.data(), k.data(), 128);
    double tc = naiveDot(ScoreAccumulation::Fp8TensorCore, q.data(), k.data(), 128);
    EXPECT_LE(tc, exact);
    // 4 steps, each at most 33 units of 2^(e-13) with 2^e <= the sum.
    EXPECT_LE(exact - tc, 4 * 33 * std::ldexp(exact, -13));
    worst = std::max(worst, (exact - tc) / exact);
  }
  EXPECT_GT(worst, 1e-5);
  EXPECT_LT(worst, 2e-3);
}

/// An LSE off by 1e-3 of its logits (a wrong descale's ~1e-2 would be more)
/// fails even against the tensor-core yardstick; the yardstick's own LSE
/// passes it.
TEST(Tolerance, TensorCoreYardstickStillCatchesScaleErrors) {
  ref::Problem p = smallProblem(1, 16, 300);
  std::mt19937 gen(5);
  auto draw = [&](size_t count) {
    std::vector<double> x = drawRounded(ElementType::F8E4M3FN, count, gen);
    for (double &value : x)
      value *= 3.0; // large logits: the LSE follows the largest score
    return x;
  };
  std::vector<double> q = draw(16 * 16), k = draw(300 * 16), v = draw(300 * 16);
  ref::ForwardResult exact = ref::forward(p, q, k, v);
  ref::ForwardResult tc = naiveForward(ElementType::F8E4M3FN, p, q, k, v,
                                       ScoreAccumulation::Fp8TensorCore);
  ErrorStats yardstick = compare(tc.lse, exact.lse);
  EXPECT_TRUE(withinTolerance(compare(tc.lse, exact.lse), yardstick));
  std::vector<double> scaled = exact.lse;
  for (double &x : scaled)
    x *= 1.0 + 1e-3;
  EXPECT_FALSE(withinTolerance(compare(scaled, exact.lse), yardstick));
}

/// The naive bf16 attention has a real, nonzero error; a float32-exact answer
/// passes the policy and an output missing the softmax rescale does not.
TEST(Tolerance, NaiveBaselineSeparatesGoodFromBroken) {
  ref::Problem p = smallProblem(2, 33, 70);
  std::mt19937 gen(7);
  auto draw = [&](size_t count) { return drawRounded(ElementType::BF16, count, gen); };
  std::vector<double> q = draw(2 * 33 * 16), k = draw(70 * 16), v = draw(70 * 16);
  ref::ForwardResult exact = ref::forward(p, q, k, v);
  ref::ForwardResult naive = naiveForward(ElementType::BF16, p, q, k, v);
  ErrorStats naiveErr = compare(naive.output, exact.output);
  EXPECT_GT(naiveErr.maxAbs, 1e-4);
  EXPECT_LT(naiveErr.relative, 2e-2);

  std::vector<double> good = exact.output;
  for (double &x : good)
    x = static_cast<float>(x);
  EXPECT_TRUE(withinTolerance(compare(good, exact.output), naiveErr));

  // Broken: the second half of the keys' weights never rescaled, i.e. the
  // output normalised by the first half's sum only.
  ref::Problem half = p;
  half.keyLen = 35;
  ref::ForwardResult firstHalf = ref::forward(half, q, k, v);
  ErrorStats brokenErr = compare(firstHalf.output, exact.output);
  EXPECT_FALSE(withinTolerance(brokenErr, naiveErr));
}

} // namespace
