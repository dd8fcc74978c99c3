//===- AttentionModule.h - from a spec to an fa module ----------*- C++ -*-===//
//
// Part of fa-mlir.
//
// What fa-run and fa-compile compile: a module holding `fa.attention` (and
// optionally `fa.attention_grad`) for one spec and problem size, wrapped in
// destination-passing entry points on memrefs with C interfaces:
//
//   fa_forward(q, k, v, [slopes,] o, lse)
//   fa_backward(q, k, v, o, do, lse, [slopes,] dq, dk, dv)
//
// where `slopes` (f32 [Hq] or [B, Hq]) is there when the spec has ALiBi.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_ATTENTIONMODULE_H
#define FA_COMPILER_ATTENTIONMODULE_H

#include "fa/runtime/Spec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace mlir {
class MLIRContext;

namespace fa {

/// The MLIR text of the module (readable, and what --dump-ir shows).
std::string buildAttentionModuleText(const ::fa::AttentionSpec &spec,
                                     const ::fa::ProblemSize &size,
                                     bool withBackward);

/// Parses and verifies that text. On failure returns null and puts the
/// verifier's diagnostic in `error`.
/// The CPU entry point fa_forward (the signature buildAttentionModuleText's
/// has: q, k, v, o, lse buffers) calling `callee`, a function that takes Q,
/// K, V [B, H, S, D] tensors and returns O; LSE is left as it was. For a
/// forward written by a user (fa-run --input).
std::string buildForwardEntryText(const ::fa::AttentionSpec &spec,
                                  const ::fa::ProblemSize &size,
                                  const std::string &callee);

OwningOpRef<ModuleOp> buildAttentionModule(MLIRContext &context,
                                           const ::fa::AttentionSpec &spec,
                                           const ::fa::ProblemSize &size,
                                           bool withBackward,
                                           std::string &error);

} // namespace fa
} // namespace mlir

#endif // FA_COMPILER_ATTENTIONMODULE_H
