//===- Reference.cpp - float64 reference attention ------------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Reference.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

using namespace fa::ref;

bool fa::ref::isVisible(const Mask &mask, int64_t i, int64_t j, int64_t m,
                        int64_t n) {
  // Bottom-right alignment: the last query sits on the diagonal of the last key.
  int64_t diagonal = i + n - m;
  switch (mask.kind) {
  case MaskKind::None:
    return true;
  case MaskKind::Causal:
    return j <= diagonal;
  case MaskKind::CausalTopLeft:
    return j <= i;
  case MaskKind::Window:
    return (mask.left < 0 || j >= diagonal - mask.left) &&
           (mask.right < 0 || j <= diagonal + mask.right);
  }
  return true;
}

ScoreModValue fa::ref::scoreModAt(const Problem &p, double score, int64_t b,
                                  int64_t h, int64_t i, int64_t j) {
  double value = p.scoreMod(score, b, h, i, j);
  if (!std::isfinite(value)) // a score_mod that masks: no gradient flows
    return {value, 0.0};
  // Central differences; the step is relative so that large scores keep
  // their significant digits. Where the one-sided slopes disagree the
  // score sits on a jump (floor, a select on the score): the derivative
  // is taken as 0 there rather than the jump over the step.
  double step = 1e-6 * std::max(1.0, std::fabs(score));
  double below = p.scoreMod(score - step, b, h, i, j);
  double above = p.scoreMod(score + step, b, h, i, j);
  double left = (value - below) / step, right = (above - value) / step;
  double scale = std::max({1.0, std::fabs(left), std::fabs(right)});
  if (!(std::fabs(left - right) <= 1e-3 * scale))
    return {value, 0.0};
  return {value, (above - below) / (2.0 * step)};
}

double fa::ref::alibiBias(const Problem &p, int64_t b, int64_t h, int64_t i,
                         int64_t j) {
  if (p.alibiSlopes.empty())
    return 0.0;
  return -p.alibiSlope(b, h) *
         static_cast<double>(std::llabs(i + p.keyLen - p.queryLen - j));
}

namespace {
/// Offsets into the dense tensors of a problem.
struct Indexer {
  const Problem &p;
  int64_t q(int64_t b, int64_t h, int64_t i) const {
    return ((b * p.queryHeads + h) * p.queryLen + i) * p.headDim;
  }
  int64_t k(int64_t b, int64_t h, int64_t j) const {
    return ((b * p.kvHeads + h) * p.keyLen + j) * p.headDim;
  }
  int64_t v(int64_t b, int64_t h, int64_t j) const {
    return ((b * p.kvHeads + h) * p.keyLen + j) * p.valueDim;
  }
  int64_t o(int64_t b, int64_t h, int64_t i) const {
    return ((b * p.queryHeads + h) * p.queryLen + i) * p.valueDim;
  }
  int64_t lse(int64_t b, int64_t h, int64_t i) const {
    return (b * p.queryHeads + h) * p.queryLen + i;
  }
};

/// The score s_ij before masking, and ds/draw (the softcap's derivative).
struct Score {
  double value;
  double derivative;
};

Score score(const Problem &p, const double *qRow, const double *kRow) {
  double dot = 0.0;
  for (int64_t d = 0; d < p.headDim; ++d)
    dot += qRow[d] * kRow[d];
  double raw = p.scale * dot;
  if (p.softcap <= 0.0)
    return {raw, 1.0};
  double t = std::tanh(raw / p.softcap);
  return {p.softcap * t, 1.0 - t * t};
}

/// `s` through the problem's score_mod, with ds/draw carried along.
Score applyScoreMod(const Problem &p, Score s, int64_t b, int64_t h,
                    int64_t i, int64_t j) {
  if (!p.scoreMod)
    return s;
  ScoreModValue mod = scoreModAt(p, s.value, b, h, i, j);
  return {mod.value, s.derivative * mod.slope};
}

/// Softmax probabilities of one query row over all keys (0 where masked), and
/// the row's LSE. Plain max-subtracted softmax over the full row.
double probabilitiesOfRow(const Problem &p, const double *query,
                          const double *key, int64_t b, int64_t h, int64_t i,
                          std::vector<double> &probs,
                          std::vector<double> *derivatives) {
  Indexer at{p};
  int64_t kvHead = p.kvHeadOf(h);
  const double *qRow = query + at.q(b, h, i);
  double rowMax = -std::numeric_limits<double>::infinity();
  probs.assign(p.keyLen, 0.0);
  if (derivatives)
    derivatives->assign(p.keyLen, 0.0);
  std::vector<bool> visible(p.keyLen);
  for (int64_t j = 0; j < p.keyLen; ++j) {
    visible[j] = isVisible(p.mask, i, j, p.queryLen, p.keyLen) &&
                 (!p.maskMod || p.maskMod(b, h, i, j));
    if (!visible[j])
      continue;
    // The bias is a constant of s: it leaves ds/draw alone.
    Score s = score(p, qRow, key + at.k(b, kvHead, j));
    s.value += alibiBias(p, b, h, i, j);
    s = applyScoreMod(p, s, b, h, i, j);
    probs[j] = s.value;
    if (derivatives)
      (*derivatives)[j] = s.derivative;
    rowMax = std::max(rowMax, s.value);
  }
  if (rowMax == -std::numeric_limits<double>::infinity()) { // No visible key.
    probs.assign(p.keyLen, 0.0);
    return -std::numeric_limits<double>::infinity();
  }
  double sum = 0.0;
  for (int64_t j = 0; j < p.keyLen; ++j) {
    probs[j] = visible[j] ? std::exp(probs[j] - rowMax) : 0.0;
    sum += probs[j];
  }
  for (double &prob : probs)
    prob /= sum;
  return rowMax + std::log(sum);
}
} // namespace

double fa::ref::rowProbabilities(const Problem &p, const double *query,
                                 const double *key, int64_t b, int64_t h,
                                 int64_t i, std::vector<double> &probs) {
  return probabilitiesOfRow(p, query, key, b, h, i, probs, nullptr);
}

void fa::ref::forwardRow(const Problem &p, const double *query,
                         const double *key, const double *value, int64_t b,
                         int64_t h, int64_t i, double *outputRow,
                         double *lse, std::vector<double> *rowProbs) {
  Indexer at{p};
  std::vector<double> local;
  std::vector<double> &probs = rowProbs ? *rowProbs : local;
  *lse = probabilitiesOfRow(p, query, key, b, h, i, probs, nullptr);
  int64_t kvHead = p.kvHeadOf(h);
  for (int64_t e = 0; e < p.valueDim; ++e)
    outputRow[e] = 0.0;
  for (int64_t j = 0; j < p.keyLen; ++j) {
    if (probs[j] == 0.0)
      continue;
    const double *vRow = value + at.v(b, kvHead, j);
    for (int64_t e = 0; e < p.valueDim; ++e)
      outputRow[e] += probs[j] * vRow[e];
  }
}

ForwardResult fa::ref::forward(const Problem &p,
                               const std::vector<double> &query,
                               const std::vector<double> &key,
                               const std::vector<double> &value) {
  Indexer at{p};
  ForwardResult result;
  result.output.assign(p.batch * p.queryHeads * p.queryLen * p.valueDim, 0.0);
  result.lse.assign(p.batch * p.queryHeads * p.queryLen, 0.0);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.queryHeads; ++h)
      for (int64_t i = 0; i < p.queryLen; ++i)
        forwardRow(p, query.data(), key.data(), value.data(), b, h, i,
                   result.output.data() + at.o(b, h, i),
                   result.lse.data() + at.lse(b, h, i));
  return result;
}

BackwardResult fa::ref::backward(const Problem &p,
                                 const std::vector<double> &query,
                                 const std::vector<double> &key,
                                 const std::vector<double> &value,
                                 const std::vector<double> &gradOutput) {
  Indexer at{p};
  BackwardResult grads;
  grads.gradQuery.assign(query.size(), 0.0);
  grads.gradKey.assign(key.size(), 0.0);
  grads.gradValue.assign(value.size(), 0.0);
  std::vector<double> probs, derivatives, gradProbs(p.keyLen);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.queryHeads; ++h) {
      int64_t kvHead = p.kvHeadOf(h);
      for (int64_t i = 0; i < p.queryLen; ++i) {
        probabilitiesOfRow(p, query.data(), key.data(), b, h, i, probs,
                           &derivatives);
        const double *dO = gradOutput.data() + at.o(b, h, i);
        // dP_j = dO . V_j, and the softmax Jacobian: dS_j = P_j (dP_j - sum_k P_k dP_k).
        double weighted = 0.0;
        for (int64_t j = 0; j < p.keyLen; ++j) {
          const double *vRow = value.data() + at.v(b, kvHead, j);
          double dot = 0.0;
          for (int64_t e = 0; e < p.valueDim; ++e)
            dot += dO[e] * vRow[e];
          gradProbs[j] = dot;
          weighted += probs[j] * dot;
        }
        const double *qRow = query.data() + at.q(b, h, i);
        double *dQ = grads.gradQuery.data() + at.q(b, h, i);
        for (int64_t j = 0; j < p.keyLen; ++j) {
          if (probs[j] == 0.0)
            continue;
          double *dV = grads.gradValue.data() + at.v(b, kvHead, j);
          for (int64_t e = 0; e < p.valueDim; ++e)
            dV[e] += probs[j] * dO[e];
          // Chain through the softcap and the scale down to q.k.
          double gradDot =
              probs[j] * (gradProbs[j] - weighted) * derivatives[j] * p.scale;
          const double *kRow = key.data() + at.k(b, kvHead, j);
          double *dK = grads.gradKey.data() + at.k(b, kvHead, j);
          for (int64_t d = 0; d < p.headDim; ++d) {
            dQ[d] += gradDot * kRow[d];
            dK[d] += gradDot * qRow[d];
          }
        }
      }
    }
  return grads;
}
