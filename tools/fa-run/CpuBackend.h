//===- CpuBackend.h - fa-run on the host through the ExecutionEngine -*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TOOLS_FARUN_CPUBACKEND_H
#define FA_TOOLS_FARUN_CPUBACKEND_H

#include "FaRun.h"
#include "fa/runtime/Spec.h"

#include <memory>
#include <string>

namespace fa {

/// Compiles a spec at one problem size through fa-tile,
/// fa-fuse-online-softmax, fa-recompute-backward and fa-to-cpu, and JITs it.
class CpuBackend {
public:
  /// Null with a one-line reason in `error` when the spec cannot be
  /// compiled; `badInput` tells a rejected spec from an internal failure.
  static std::unique_ptr<CpuBackend>
  create(const AttentionSpec &spec, const ProblemSize &size, bool withBackward,
         NegativeControl control, std::string &error, bool &badInput);
  virtual ~CpuBackend();

  /// Buffers are dense [B, H, S, W] in the spec's storage type (f16/bf16
  /// bits); LSE is float. `alibiSlopes` is the dense [Hq] or [B, Hq] float
  /// slopes when the spec has ALiBi, else ignored.
  virtual void forward(void *q, void *k, void *v, float *alibiSlopes,
                       void *o, float *lse) = 0;
  virtual void backward(void *q, void *k, void *v, void *o, void *gradOut,
                        float *lse, float *alibiSlopes, void *dq, void *dk,
                        void *dv) = 0;
  /// Seconds spent compiling (IR build, passes, LLVM JIT).
  virtual double compileSeconds() const = 0;
};

} // namespace fa

#endif // FA_TOOLS_FARUN_CPUBACKEND_H
