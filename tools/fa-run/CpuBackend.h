//===- CpuBackend.h - fa-run on the host through the ExecutionEngine -*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TOOLS_FARUN_CPUBACKEND_H
#define FA_TOOLS_FARUN_CPUBACKEND_H

#include "FaRun.h"
#include "fa/runtime/Variant.h"
#include "fa/runtime/Spec.h"

#include <memory>
#include <string>

namespace mlir {
class MLIRContext;
namespace fa {
class AttentionOp;
} // namespace fa
class ModuleOp;
template <typename OpTy> class OwningOpRef;
} // namespace mlir

namespace fa {

/// fa-run --input (RaisedInput.cpp): the module of `path` after
/// fa-raise-attention, with an fa_forward entry calling its function; null
/// with a reason when it does not parse or state the problem (`badInput`)
/// or was not raised to one fa.attention.
/// An fa.attention with variant regions instead gets entries around a copy
/// of it: fa_forward(q, k, v, captures..., o, lse) and, with
/// `withBackward`, fa_backward(q, k, v, o, do, lse, captures..., dq, dk, dv).
mlir::OwningOpRef<mlir::ModuleOp>
loadRaisedInput(mlir::MLIRContext &context, const std::string &path,
                const AttentionSpec &spec, const ProblemSize &size,
                bool withBackward, std::string &error, bool &badInput);

/// Adds to `module` the entries above around a copy of `attention`
/// (VariantEntries.cpp).
bool buildVariantEntries(mlir::ModuleOp module,
                         mlir::fa::AttentionOp attention, bool withBackward);

/// Compiles a spec at one problem size through fa-tile,
/// fa-fuse-online-softmax, fa-recompute-backward and fa-to-cpu, and JITs it.
class CpuBackend {
public:
  /// Null with a one-line reason in `error` when the spec cannot be
  /// compiled; `badInput` tells a rejected spec from an internal failure.
  /// `input`, if not empty, is fa-run --input's file, compiled instead of
  /// the spec's module (forward only).
  static std::unique_ptr<CpuBackend>
  create(const AttentionSpec &spec, const ProblemSize &size, bool withBackward,
         NegativeControl control, std::string &error, bool &badInput,
         const std::string &input = "");
  virtual ~CpuBackend();

  /// Buffers are dense [B, H, S, W] in the spec's storage type (f16/bf16
  /// bits; f8E4M3FN bytes with a bf16 O); LSE is float. `alibiSlopes` is
  /// the dense [Hq] or [B, Hq] float slopes when the spec has ALiBi, else
  /// ignored; `descales` Q's, K's and V's descale for f8E4M3FN ([3], or
  /// [3, B, Hkv] with descale=head), else ignored.
  virtual void forward(void *q, void *k, void *v, float *alibiSlopes,
                       void *o, float *lse, float *descales) = 0;
  virtual void backward(void *q, void *k, void *v, void *o, void *gradOut,
                        float *lse, float *alibiSlopes, void *dq, void *dk,
                        void *dv) = 0;
  /// With an --input whose fa.attention has captured values: draws fresh
  /// ones from `seed` for the kernel (float elements uniform in [-1, 1],
  /// integer and index ones in {0, 1, 2, 3}, i1 ones in {0, 1}) and returns
  /// them as the reference reads them. Empty otherwise.
  virtual std::vector<CaptureValue> drawCaptures(uint64_t seed) = 0;
  /// Gives `problem` the user's score_mod and mask_mod, evaluated in
  /// float64 on the drawn captures (fa/runtime/Variant.h); none without them.
  virtual void bindVariantRegions(ref::Problem &problem) = 0;
  /// Whether the forward writes LSE (all but a raised --input's do).
  virtual bool computesLse() const = 0;
  /// Seconds spent compiling (IR build, passes, LLVM JIT).
  virtual double compileSeconds() const = 0;
};

} // namespace fa

#endif // FA_TOOLS_FARUN_CPUBACKEND_H
