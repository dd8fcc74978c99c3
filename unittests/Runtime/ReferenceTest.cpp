//===- ReferenceTest.cpp - the float64 reference against first principles -===//
//
// Part of fa-mlir.
//
// The reference is the judge of every kernel, so it is itself checked here
// against facts that do not depend on how it is written: masks against their
// definitions, GQA against MHA with repeated heads, the backward against
// central finite differences of the forward, and a deliberately wrong
// gradient (D forgotten) that those differences must catch.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace fa::ref;
using fa::MaskKind;

namespace {

std::vector<double> randomNormal(size_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(count);
  for (double &x : values)
    x = normal(gen);
  return values;
}

Problem makeProblem(int64_t hq, int64_t hkv, int64_t m, int64_t n, int64_t d,
                    int64_t dv, Mask mask = {}) {
  Problem p;
  p.batch = 2;
  p.queryHeads = hq;
  p.kvHeads = hkv;
  p.queryLen = m;
  p.keyLen = n;
  p.headDim = d;
  p.valueDim = dv;
  p.scale = 1.0 / std::sqrt(static_cast<double>(d));
  p.mask = mask;
  return p;
}

struct Inputs {
  std::vector<double> q, k, v;
};

Inputs randomInputs(const Problem &p, uint32_t seed) {
  return {randomNormal(p.batch * p.queryHeads * p.queryLen * p.headDim, seed),
          randomNormal(p.batch * p.kvHeads * p.keyLen * p.headDim, seed + 1),
          randomNormal(p.batch * p.kvHeads * p.keyLen * p.valueDim, seed + 2)};
}

TEST(ReferenceMask, MatchesDesignDefinitions) {
  // M = 3 queries, N = 5 keys: bottom-right causal puts query 2 on key 4.
  Mask causal{MaskKind::Causal};
  EXPECT_TRUE(isVisible(causal, 0, 2, 3, 5));
  EXPECT_FALSE(isVisible(causal, 0, 3, 3, 5));
  EXPECT_TRUE(isVisible(causal, 2, 4, 3, 5));
  Mask topLeft{MaskKind::CausalTopLeft};
  EXPECT_TRUE(isVisible(topLeft, 1, 1, 3, 5));
  EXPECT_FALSE(isVisible(topLeft, 1, 2, 3, 5));
  Mask window{MaskKind::Window, 1, 0}; // Keys diagonal-1 .. diagonal.
  EXPECT_FALSE(isVisible(window, 2, 2, 3, 5));
  EXPECT_TRUE(isVisible(window, 2, 3, 3, 5));
  EXPECT_TRUE(isVisible(window, 2, 4, 3, 5));
  Mask unbounded{MaskKind::Window, -1, -1};
  EXPECT_TRUE(isVisible(unbounded, 0, 4, 3, 5));
}

TEST(ReferenceForward, ConstantValueRowsReproduceTheValue) {
  // Softmax weights sum to one, so a V whose rows are all equal comes back.
  Problem p = makeProblem(2, 2, 7, 11, 16, 8, {MaskKind::Causal});
  Inputs in = randomInputs(p, 3);
  for (int64_t row = 0; row < p.batch * p.kvHeads * p.keyLen; ++row)
    for (int64_t e = 0; e < p.valueDim; ++e)
      in.v[row * p.valueDim + e] = 0.5 + e;
  ForwardResult out = forward(p, in.q, in.k, in.v);
  for (size_t idx = 0; idx < out.output.size(); ++idx)
    EXPECT_NEAR(out.output[idx], 0.5 + idx % p.valueDim, 1e-12);
}

TEST(ReferenceForward, LseIsTheLogOfTheScoreSum) {
  Problem p = makeProblem(1, 1, 1, 3, 2, 2);
  p.batch = 1;
  std::vector<double> q = {1.0, 2.0}, k = {1, 0, 0, 1, 1, 1}, v(6, 1.0);
  ForwardResult out = forward(p, q, k, v);
  double s = p.scale;
  double expected = std::log(std::exp(1 * s) + std::exp(2 * s) + std::exp(3 * s));
  EXPECT_NEAR(out.lse[0], expected, 1e-14);
}

TEST(ReferenceForward, FullyMaskedRowsGiveZeroAndMinusInfinity) {
  // window(0, 0) with M > N leaves the first M - N queries with no key.
  Problem p = makeProblem(2, 1, 9, 4, 8, 8, {MaskKind::Window, 0, 0});
  Inputs in = randomInputs(p, 5);
  ForwardResult out = forward(p, in.q, in.k, in.v);
  for (int64_t i = 0; i < p.queryLen; ++i) {
    bool empty = i < p.queryLen - p.keyLen;
    double lse = out.lse[i];
    EXPECT_EQ(std::isinf(lse) && lse < 0, empty) << "row " << i;
    for (int64_t e = 0; e < p.valueDim; ++e) {
      double o = out.output[i * p.valueDim + e];
      EXPECT_FALSE(std::isnan(o));
      if (empty) {
        EXPECT_EQ(o, 0.0);
      }
    }
  }
}

TEST(ReferenceForward, LargeLogitsStayFinite) {
  Problem p = makeProblem(1, 1, 16, 16, 8, 8);
  p.scale = 40.0; // Logits around +-100 and beyond.
  Inputs in = randomInputs(p, 9);
  ForwardResult out = forward(p, in.q, in.k, in.v);
  for (double o : out.output)
    EXPECT_TRUE(std::isfinite(o));
  for (double lse : out.lse)
    EXPECT_TRUE(std::isfinite(lse));
}

TEST(ReferenceForward, GqaEqualsMhaWithRepeatedHeads) {
  Problem gqa = makeProblem(6, 2, 13, 17, 8, 4, {MaskKind::Causal});
  Inputs in = randomInputs(gqa, 11);
  Problem mha = gqa;
  mha.kvHeads = 6;
  // Repeat each KV head over its group of 3 query heads.
  auto repeat = [&](const std::vector<double> &x, int64_t width) {
    std::vector<double> out;
    for (int64_t b = 0; b < gqa.batch; ++b)
      for (int64_t h = 0; h < mha.kvHeads; ++h) {
        auto begin = x.begin() + ((b * gqa.kvHeads + gqa.kvHeadOf(h)) *
                                  gqa.keyLen * width);
        out.insert(out.end(), begin, begin + gqa.keyLen * width);
      }
    return out;
  };
  ForwardResult a = forward(gqa, in.q, in.k, in.v);
  ForwardResult b = forward(mha, in.q, repeat(in.k, gqa.headDim),
                            repeat(in.v, gqa.valueDim));
  ASSERT_EQ(a.output.size(), b.output.size());
  for (size_t idx = 0; idx < a.output.size(); ++idx)
    EXPECT_DOUBLE_EQ(a.output[idx], b.output[idx]);
}

TEST(ReferenceForward, AlibiBiasIsBottomRightAligned) {
  // q.k = 0 everywhere, so s_ij is the bias alone: -slope · |i + N - M - j|.
  Problem p = makeProblem(2, 1, 2, 3, 2, 1);
  p.batch = 1;
  p.alibiSlopes = {0.5, 2.0};
  std::vector<double> q(4, 0.0), k(6, 0.0), v = {1.0, 2.0, 3.0};
  ForwardResult out = forward(p, q, k, v);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 2; ++i) {
      double slope = p.alibiSlopes[h], weights = 0.0, weighted = 0.0;
      for (int64_t j = 0; j < 3; ++j) {
        double w = std::exp(-slope * std::fabs(double(i + 3 - 2 - j)));
        weights += w;
        weighted += w * v[j];
      }
      EXPECT_NEAR(out.lse[h * 2 + i], std::log(weights), 1e-14);
      EXPECT_NEAR(out.output[h * 2 + i], weighted / weights, 1e-14);
    }
  // The last query is at distance 0 from the last key.
  EXPECT_DOUBLE_EQ(alibiBias(p, 0, 1, 1, 2), 0.0);
  EXPECT_DOUBLE_EQ(alibiBias(p, 0, 1, 0, 0), -2.0);
}

TEST(ReferenceForward, AlibiSlopesPerBatchAreReadPerBatch) {
  // [B, Hq] slopes equal to the [Hq] ones in batch 0 only.
  Problem shared = makeProblem(2, 2, 5, 7, 4, 4, {MaskKind::Causal});
  shared.alibiSlopes = {0.25, 0.75};
  Problem perBatch = shared;
  perBatch.alibiSlopes = {0.25, 0.75, 1.5, 0.1};
  Inputs in = randomInputs(shared, 41);
  ForwardResult a = forward(shared, in.q, in.k, in.v);
  ForwardResult b = forward(perBatch, in.q, in.k, in.v);
  size_t half = a.lse.size() / 2;
  for (size_t idx = 0; idx < a.lse.size(); ++idx) {
    if (idx < half)
      EXPECT_DOUBLE_EQ(a.lse[idx], b.lse[idx]);
    else
      EXPECT_NE(a.lse[idx], b.lse[idx]);
  }
}

/// L(Q, K, V) = sum(O * dO): its gradient is what backward() returns.
double loss(const Problem &p, const Inputs &in, const std::vector<double> &dO) {
  ForwardResult out = forward(p, in.q, in.k, in.v);
  double total = 0.0;
  for (size_t idx = 0; idx < dO.size(); ++idx)
    total += out.output[idx] * dO[idx];
  return total;
}

/// Max |analytic - numeric| over every input element.
double finiteDifferenceError(const Problem &p, const Inputs &in,
                             const std::vector<double> &dO,
                             const BackwardResult &grads) {
  const double h = 1e-5;
  double worst = 0.0;
  auto probe = [&](std::vector<double> Inputs::*tensor,
                   const std::vector<double> &analytic) {
    for (size_t idx = 0; idx < analytic.size(); ++idx) {
      Inputs plus = in, minus = in;
      (plus.*tensor)[idx] += h;
      (minus.*tensor)[idx] -= h;
      double numeric = (loss(p, plus, dO) - loss(p, minus, dO)) / (2 * h);
      worst = std::max(worst, std::fabs(numeric - analytic[idx]));
    }
  };
  probe(&Inputs::q, grads.gradQuery);
  probe(&Inputs::k, grads.gradKey);
  probe(&Inputs::v, grads.gradValue);
  return worst;
}

struct BackwardCase {
  const char *name;
  int64_t hq, hkv, m, n, d, dv;
  Mask mask;
  double softcap;
  /// ALiBi slopes: 0 none, 1 one per query head [Hq], 2 per [B, Hq].
  int alibiRank = 0;
};

void PrintTo(const BackwardCase &c, std::ostream *os) { *os << c.name; }

class ReferenceBackward : public ::testing::TestWithParam<BackwardCase> {};

TEST_P(ReferenceBackward, MatchesFiniteDifferences) {
  const BackwardCase &c = GetParam();
  Problem p = makeProblem(c.hq, c.hkv, c.m, c.n, c.d, c.dv, c.mask);
  p.softcap = c.softcap;
  if (c.alibiRank > 0) {
    // Distinct, positive slopes; large enough that the bias reshapes P.
    size_t count = (c.alibiRank == 2 ? p.batch : 1) * p.queryHeads;
    for (size_t idx = 0; idx < count; ++idx)
      p.alibiSlopes.push_back(0.3 + 0.17 * static_cast<double>(idx));
  }
  Inputs in = randomInputs(p, 21);
  std::vector<double> dO =
      randomNormal(p.batch * p.queryHeads * p.queryLen * p.valueDim, 99);
  BackwardResult grads = backward(p, in.q, in.k, in.v, dO);
  EXPECT_LT(finiteDifferenceError(p, in, dO, grads), 1e-7);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ReferenceBackward,
    ::testing::Values(
        BackwardCase{"mha", 2, 2, 5, 7, 4, 3, {}, 0.0},
        BackwardCase{"gqa_causal", 4, 2, 6, 5, 3, 4, {MaskKind::Causal}, 0.0},
        BackwardCase{"mqa_top_left", 3, 1, 4, 6, 4, 2, {MaskKind::CausalTopLeft}, 0.0},
        BackwardCase{"window_masked_rows", 2, 1, 7, 3, 3, 3, {MaskKind::Window, 0, 0}, 0.0},
        BackwardCase{"softcap", 2, 2, 4, 4, 5, 5, {}, 2.0},
        BackwardCase{"alibi_head", 2, 2, 5, 7, 4, 3, {}, 0.0, 1},
        BackwardCase{"alibi_batch_head_gqa_causal", 4, 2, 6, 5, 3, 4,
                     {MaskKind::Causal}, 0.0, 2},
        BackwardCase{"alibi_softcap_window", 2, 1, 7, 4, 3, 3,
                     {MaskKind::Window, 1, 0}, 2.0, 1}),
    [](const ::testing::TestParamInfo<BackwardCase> &info) {
      return std::string(info.param.name);
    });

// Negative control: the gradient with D = rowsum(dO * O) forgotten must be
// caught by the same finite-difference check.
TEST(ReferenceBackwardControl, ForgettingDIsCaught) {
  Problem p = makeProblem(2, 2, 5, 6, 4, 4);
  Inputs in = randomInputs(p, 31);
  std::vector<double> dO =
      randomNormal(p.batch * p.queryHeads * p.queryLen * p.valueDim, 32);
  BackwardResult grads = backward(p, in.q, in.k, in.v, dO);
  ForwardResult fwd = forward(p, in.q, in.k, in.v);
  // Without D, dS = P * dP: add back P * D's contribution to dQ (via dS . K).
  BackwardResult broken = grads;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.queryHeads; ++h)
      for (int64_t i = 0; i < p.queryLen; ++i) {
        size_t row = (b * p.queryHeads + h) * p.queryLen + i;
        double rowD = 0.0;
        for (int64_t e = 0; e < p.valueDim; ++e)
          rowD += dO[row * p.valueDim + e] * fwd.output[row * p.valueDim + e];
        std::vector<double> probs(p.keyLen);
        double sum = 0.0, rowMax = -INFINITY;
        for (int64_t j = 0; j < p.keyLen; ++j) {
          double dot = 0.0;
          for (int64_t d = 0; d < p.headDim; ++d)
            dot += in.q[row * p.headDim + d] *
                   in.k[((b * p.kvHeads + h) * p.keyLen + j) * p.headDim + d];
          probs[j] = dot * p.scale;
          rowMax = std::max(rowMax, probs[j]);
        }
        for (double &x : probs)
          sum += (x = std::exp(x - rowMax));
        for (int64_t j = 0; j < p.keyLen; ++j)
          for (int64_t d = 0; d < p.headDim; ++d)
            broken.gradQuery[row * p.headDim + d] +=
                p.scale * probs[j] / sum * rowD *
                in.k[((b * p.kvHeads + h) * p.keyLen + j) * p.headDim + d];
      }
  EXPECT_GT(finiteDifferenceError(p, in, dO, broken), 1e-3);
}

} // namespace
