//===- Reference.h - float64 reference attention ----------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// The independent float64 reference that every fa-mlir kernel is checked
// against. It is written plainly from docs/design.md's semantics and shares no code
// with the compiler: no tiling, no online softmax, no exp2 tricks.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_REFERENCE_H
#define FA_RUNTIME_REFERENCE_H

#include "fa/runtime/Mask.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace fa {

/// Which keys a query may attend to: the one enumeration of fa/runtime/Mask.h.
using MaskKind = ::FaMaskKind;

namespace ref {

/// Which keys a query sees. `left`/`right` bound a window; -1 is unbounded.
struct Mask {
  MaskKind kind = MaskKind::None;
  int64_t left = -1;
  int64_t right = -1;
};

/// True when key `j` is visible to query `i` among M queries and N keys.
bool isVisible(const Mask &mask, int64_t i, int64_t j, int64_t m, int64_t n);

/// The logical sizes and options of one attention problem.
struct Problem {
  int64_t batch = 1, queryHeads = 1, kvHeads = 1;
  int64_t queryLen = 1, keyLen = 1, headDim = 1, valueDim = 1;
  double scale = 1.0;   ///< Multiplies q.k.
  double softcap = 0.0; ///< s = softcap * tanh(s / softcap) when > 0.
  Mask mask;
  /// ALiBi slopes, as FlashAttention's `alibi_slopes`: empty for none, Hq
  /// values (shared by every batch) or B·Hq values, row-major [B, Hq].
  std::vector<double> alibiSlopes;

  /// The slope of query head `h` in batch `b`; 0 without ALiBi.
  double alibiSlope(int64_t b, int64_t h) const {
    if (alibiSlopes.empty())
      return 0.0;
    if (static_cast<int64_t>(alibiSlopes.size()) == queryHeads)
      return alibiSlopes[h];
    return alibiSlopes[b * queryHeads + h];
  }

  /// A score_mod (the user's function): the score after scale, softcap
  /// and ALiBi of query i and key j in (batch b, query head h) to the
  /// score the softmax sees. Empty for none. Its derivative, which the
  /// backward needs, is taken by central differences in float64, apart
  /// from any differentiation the compiler does.
  std::function<double(double score, int64_t b, int64_t h, int64_t i,
                       int64_t j)>
      scoreMod;
  /// A mask_mod: whether key j is visible to query i (and-ed with `mask`).
  std::function<bool(int64_t b, int64_t h, int64_t i, int64_t j)> maskMod;

  /// The KV head that query head `h` reads (GQA/MQA).
  int64_t kvHeadOf(int64_t h) const {
    return h / (queryHeads / kvHeads);
  }
};

/// The ALiBi term added to s_ij after the softcap, before the mask:
/// -slope(b, h) · |i + N - M - j| (bottom-right aligned, like the causal
/// mask); 0 without ALiBi.
double alibiBias(const Problem &problem, int64_t b, int64_t h, int64_t i,
                 int64_t j);

/// Dense row-major tensors: Q [B,Hq,M,D], K [B,Hkv,N,D], V [B,Hkv,N,Dv],
/// O and dO [B,Hq,M,Dv], LSE [B,Hq,M].
/// A score_mod's value at `score` and its slope d(value)/d(score) (0 where
/// the value is not finite or jumps). Needs `problem.scoreMod`.
struct ScoreModValue {
  double value, slope;
};
ScoreModValue scoreModAt(const Problem &problem, double score, int64_t b,
                         int64_t h, int64_t i, int64_t j);

struct ForwardResult {
  std::vector<double> output;
  std::vector<double> lse;
};

/// Computes one query row: O[b,h,i,:] into `outputRow` (Dv values) and its
/// natural-log LSE. A row with no visible key gives zeros and -inf. With
/// `probs`, the row's probabilities are left there, as rowProbabilities
/// gives them.
void forwardRow(const Problem &problem, const double *query, const double *key,
                const double *value, int64_t b, int64_t h, int64_t i,
                double *outputRow, double *lse,
                std::vector<double> *probs = nullptr);

/// The softmax probabilities of query row (b, h, i) over every key (0 where
/// masked) into `probs` (N values); returns the row's LSE (-inf with no
/// visible key).
double rowProbabilities(const Problem &problem, const double *query,
                        const double *key, int64_t b, int64_t h, int64_t i,
                        std::vector<double> &probs);

/// The whole forward pass.
ForwardResult forward(const Problem &problem, const std::vector<double> &query,
                      const std::vector<double> &key,
                      const std::vector<double> &value);

struct BackwardResult {
  std::vector<double> gradQuery, gradKey, gradValue;
};

/// The whole backward pass, from Q, K, V and dO alone: O and the softmax are
/// recomputed here, so a wrong O or LSE from a kernel cannot leak into the
/// reference gradients.
BackwardResult backward(const Problem &problem,
                        const std::vector<double> &query,
                        const std::vector<double> &key,
                        const std::vector<double> &value,
                        const std::vector<double> &gradOutput);

} // namespace ref
} // namespace fa

#endif // FA_RUNTIME_REFERENCE_H
