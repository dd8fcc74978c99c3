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

#include "fa/runtime/Mask.h"
#include "fa/runtime/Numerics.h"
#include "fa/runtime/Reference.h"
#include "fa/runtime/fa_spec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fa {

/// ALiBi slopes of a spec: none, one per query head ([Hq]) or one per batch
/// and query head ([B, Hq]). The values of the C API's fa_alibi_kind.
enum class AlibiKind : int32_t {
  None = FA_ALIBI_NONE,
  Head = FA_ALIBI_HEAD,
  BatchHead = FA_ALIBI_BATCH_HEAD,
};
/// f8E4M3FN's descale factors: one f32 per tensor, or one per (batch, KV
/// head) ([B, Hkv], FlashAttention-3's API). The values of fa_descale_kind.
enum class DescaleKind : int32_t {
  Tensor = FA_DESCALE_TENSOR,
  Head = FA_DESCALE_HEAD,
};

struct AttentionSpec {
  int64_t headDim = 0;
  int64_t valueDim = 0;
  ElementType dtype = ElementType::BF16;
  ref::Mask mask;
  double softcap = 0.0;
  AlibiKind alibi = AlibiKind::None;
  std::optional<double> scale; ///< Default 1/sqrt(d).
  DescaleKind descale = DescaleKind::Tensor; ///< f8E4M3FN only
  int64_t blockM = 64, blockN = 64;

  double scaleOrDefault() const;
};

/// Parses "key=value,..." with keys d, dv, dtype, mask, softcap, alibi,
/// descale, scale, block_m, block_n, each at most once. ALiBi: none, head
/// or batch_head. Descale (f8e4m3fn only): tensor (default) or head. Masks: none, causal, causal_top_left, window(L,R) (or
/// window:L:R). Values outside fa/runtime/Limits.h's ranges are refused
/// (checkSpec). On error returns false with a one-line reason in `error`.
/// `keysGiven`, if set, receives the keys the text states (so a caller can
/// tell block_m=64 from the default).
bool parseSpec(const std::string &text, AttentionSpec &spec,
               std::string &error,
               std::vector<std::string> *keysGiven = nullptr);

/// One key of spec text, as parseSpec reads it, set in `spec` (a value is
/// never pasted into spec text: "causal,d=64" is a bad mask). False with a
/// one-line reason; nothing checks the whole spec (checkSpec does).
bool setSpecValue(AttentionSpec &spec, const std::string &key,
                  const std::string &value, std::string &error);

/// The checks parseSpec makes on a spec however it was built (the CLIs
/// build one field by field): D, Dv >= 1, scale and softcap in range,
/// window bounds in [-1, kMaxSequence] (and none on another mask), blocks
/// powers of two. False with a one-line reason that names the range.
bool checkSpec(const AttentionSpec &spec, std::string &error);

/// checkSpec, and what a backward further needs: 16-bit inputs and
/// |scale| <= limits::kMaxAbsBackwardScale. Every front door of a backward
/// (fa-compile --bwd, fa-run --bwd, the backward kernel's manifest, the C
/// API, the Python op under autograd) asks this.
bool checkBackwardSpec(const AttentionSpec &spec, std::string &error);

/// One spec value from its text, as parseSpec reads it: false with a
/// one-line reason in `error`.
bool parseMask(const std::string &text, ref::Mask &mask, std::string &error);
bool parseAlibi(const std::string &text, AlibiKind &alibi, std::string &error);
bool parseSpecDtype(const std::string &text, ElementType &dtype,
                    std::string &error);

/// The spec as parseSpec reads it back exactly: every key, the scale
/// (default resolved) and softcap printed so that they round-trip bit for
/// bit (exactDouble). A block not stated (the C API's 0: the compiler
/// picks) is left out.
std::string specText(const AttentionSpec &spec, bool blockMStated = true,
                     bool blockNStated = true);

/// A double as the shortest text (of %.15g, %.16g and %.17g) that strtod
/// reads back to the same double.
std::string exactDouble(double value);

/// `text` as a message may quote it: each control byte (below 0x20, and
/// 0x7F) as \xNN, so that a NUL or an escape sequence in a name or a value
/// neither cuts nor rewrites the line it is reported on; `keepNewlines`
/// leaves '\n' (a message of several diagnostics, one a line).
std::string printableText(const std::string &text, bool keepNewlines = false);

/// The text of a mask as the fa dialect prints it: "window(128, 0)".
std::string maskName(const ref::Mask &mask);

/// The spec key's text: "none", "head" or "batch_head".
const char *alibiName(AlibiKind alibi);

/// B, Hq, Hkv, M, N of one run.
struct ProblemSize {
  int64_t batch = 1, queryHeads = 1, kvHeads = 1, queryLen = 1, keyLen = 1;
};

/// Checks sizes against each other and the spec, and that every tensor of
/// the run (Q, K, V, O, LSE, dO, dQ, dK, dV, the ALiBi slopes) has at most
/// fa::limits::kMaxTensorElements elements; false with a reason. Every
/// front door comes through here: fa-run, the launches, and the tensor
/// checks of the C API (fa_check_forward).
bool validateProblem(const AttentionSpec &spec, const ProblemSize &size,
                     std::string &error);

/// fa_check_forward and fa_check_backward (fa_spec.h): a call's tensors as
/// a framework holds them; `alibiSlopes` null for none. False with the
/// first violation, in one line that names the tensor.
bool checkForwardTensors(fa_layout layout, const fa_tensor_desc &q,
                         const fa_tensor_desc &k, const fa_tensor_desc &v,
                         const fa_tensor_desc *alibiSlopes, std::string &error);
bool checkBackwardTensors(fa_layout layout, const fa_tensor_desc &q,
                          const fa_tensor_desc &k, const fa_tensor_desc &v,
                          const fa_tensor_desc *alibiSlopes,
                          const fa_tensor_desc &out, const fa_tensor_desc &lse,
                          const fa_tensor_desc &gradOut, std::string &error);

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
