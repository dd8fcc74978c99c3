//===- Spec.h - attention specs and problem sizes ---------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// The user-facing description of an attention kernel, as fa-run and
// fa-compile take it: "d=72,dv=72,dtype=bf16,mask=causal,softcap=0".
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_SPEC_H
#define FA_RUNTIME_SPEC_H

#include "fa/runtime/Numerics.h"
#include "fa/runtime/Reference.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fa {

/// ALiBi slopes of a spec: none, one per query head ([Hq]) or one per batch
/// and query head ([B, Hq]).
enum class AlibiKind { None, Head, BatchHead };

struct AttentionSpec {
  int64_t headDim = 0;
  int64_t valueDim = 0;
  ElementType dtype = ElementType::BF16;
  ref::Mask mask;
  double softcap = 0.0;
  AlibiKind alibi = AlibiKind::None;
  std::optional<double> scale; ///< Default 1/sqrt(d).
  int64_t blockM = 64, blockN = 64;

  double scaleOrDefault() const;
};

/// Parses "key=value,..." with keys d, dv, dtype, mask, softcap, alibi,
/// scale, block_m, block_n. ALiBi: none, head or batch_head. Masks: none, causal, causal_top_left, window(L,R) (or
/// window:L:R). On error returns false with a one-line reason in `error`.
bool parseSpec(const std::string &text, AttentionSpec &spec,
               std::string &error);

/// The text of a mask as the fa dialect prints it: "window(128, 0)".
std::string maskName(const ref::Mask &mask);

/// The spec key's text: "none", "head" or "batch_head".
const char *alibiName(AlibiKind alibi);

/// B, Hq, Hkv, M, N of one run.
struct ProblemSize {
  int64_t batch = 1, queryHeads = 1, kvHeads = 1, queryLen = 1, keyLen = 1;
};

/// Checks sizes against each other and the spec; false with a reason.
bool validateProblem(const AttentionSpec &spec, const ProblemSize &size,
                     std::string &error);

/// The shape of the ALiBi slopes of a spec at a size: {} (none), {Hq} or
/// {B, Hq}.
std::vector<int64_t> alibiShape(const AttentionSpec &spec,
                                const ProblemSize &size);

/// Fresh random ALiBi slopes for a run, exactly representable in f32 (what
/// the kernel is given): slope_h = u · 2^(-8h/Hq) with u uniform in
/// [0.1, 1), drawn per head (and per batch for batch_head), so heads differ.
/// Empty without ALiBi.
std::vector<double> randomAlibiSlopes(const AttentionSpec &spec,
                                      const ProblemSize &size, uint64_t seed);

/// The reference's view of a spec at a size, with the run's ALiBi slopes
/// (empty without ALiBi).
ref::Problem makeProblem(const AttentionSpec &spec, const ProblemSize &size,
                         std::vector<double> alibiSlopes = {});

} // namespace fa

#endif // FA_RUNTIME_SPEC_H
