//===- CpuBackend.cpp - fa-run on the host through the ExecutionEngine ----===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"

#include "fa/Compiler/AttentionModule.h"
#include "fa/Compiler/KernelCompiler.h"
#include "fa/Conversion/Passes.h"
#include "fa/Dialect/FA/IR/FADialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <chrono>

using namespace fa;

#ifndef FA_C_RUNNER_UTILS
#error "FA_C_RUNNER_UTILS must name libmlir_c_runner_utils.so"
#endif

namespace {

/// The memref descriptor the C interface passes by pointer.
template <int Rank> struct MemRefDescriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

template <int Rank>
MemRefDescriptor<Rank> dense(void *data, std::array<int64_t, Rank> shape) {
  MemRefDescriptor<Rank> d{data, data, 0, {}, {}};
  int64_t stride = 1;
  for (int i = Rank - 1; i >= 0; --i) {
    d.sizes[i] = shape[i];
    d.strides[i] = stride;
    stride *= shape[i];
  }
  return d;
}

using D4 = MemRefDescriptor<4>;
using D3 = MemRefDescriptor<3>;
using ForwardFn = void (*)(D4 *, D4 *, D4 *, D4 *, D3 *);
using BackwardFn = void (*)(D4 *, D4 *, D4 *, D4 *, D4 *, D3 *, D4 *, D4 *,
                            D4 *);
// With ALiBi the slopes (a rank-1 or rank-2 descriptor) follow the inputs.
using AlibiForwardFn = void (*)(D4 *, D4 *, D4 *, void *, D4 *, D3 *);
// f8E4M3FN: the descales ([3] f32) follow Q, K, V (before any slopes).
using DescaledForwardFn = void (*)(D4 *, D4 *, D4 *, void *, D4 *, D3 *);
using DescaledAlibiForwardFn = void (*)(D4 *, D4 *, D4 *, void *, void *,
                                        D4 *, D3 *);
using AlibiBackwardFn = void (*)(D4 *, D4 *, D4 *, D4 *, D4 *, D3 *, void *,
                                 D4 *, D4 *, D4 *);

class JitCpuBackend : public CpuBackend {
public:
  JitCpuBackend(const AttentionSpec &spec, const ProblemSize &size,
                NegativeControl control)
      : spec(spec), size(size) {
    // The broken build: the kernel never sees the slopes.
    if (control == NegativeControl::NoAlibi)
      this->spec.alibi = AlibiKind::None;
  }

  bool compile(bool withBackward, NegativeControl control,
               const std::string &input, std::string &error, bool &badInput) {
    auto start = std::chrono::steady_clock::now();
    context = mlir::fa::createCompilerContext();

    if (!input.empty()) {
      module = loadRaisedInput(*context, input, spec, size, error, badInput);
      if (!module)
        return false;
    } else {
      module = mlir::fa::buildAttentionModule(*context, spec, size, withBackward,
                                              error);
      if (!module) {
        badInput = true; // The verifier rejected the spec at this size.
        return false;
      }
    }
    mlir::PassManager pm(context.get());
    mlir::fa::FAPipelineOptions options;
    options.blockM = spec.blockM;
    options.blockN = spec.blockN;
    options.testOmitRescale = control == NegativeControl::NoRescale;
    options.testOmitRowDot = control == NegativeControl::NoRowDot;
    mlir::fa::buildFACompileCPUPipeline(pm, options);
    std::string diagnostics;
    llvm::raw_string_ostream os(diagnostics);
    mlir::ScopedDiagnosticHandler handler(context.get(), [&](mlir::Diagnostic &d) {
      os << d.str() << "\n";
      return mlir::success();
    });
    if (mlir::failed(pm.run(*module))) {
      error = "compilation failed: " + diagnostics;
      return false;
    }

    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto transformer = mlir::makeOptimizingTransformer(
        /*optLevel=*/3, /*sizeLevel=*/0, /*targetMachine=*/nullptr);
    mlir::ExecutionEngineOptions engineOptions;
    engineOptions.transformer = transformer;
    llvm::StringRef libs[] = {FA_C_RUNNER_UTILS};
    engineOptions.sharedLibPaths = libs;
    auto maybeEngine = mlir::ExecutionEngine::create(*module, engineOptions);
    if (!maybeEngine) {
      error = "JIT failed: " + llvm::toString(maybeEngine.takeError());
      return false;
    }
    engine = std::move(*maybeEngine);
    auto fwd = engine->lookup("_mlir_ciface_fa_forward");
    if (!fwd) {
      error = "JIT: " + llvm::toString(fwd.takeError());
      return false;
    }
    forwardFn = reinterpret_cast<ForwardFn>(*fwd);
    if (withBackward) {
      auto bwd = engine->lookup("_mlir_ciface_fa_backward");
      if (!bwd) {
        error = "JIT: " + llvm::toString(bwd.takeError());
        return false;
      }
      backwardFn = reinterpret_cast<BackwardFn>(*bwd);
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start)
                  .count();
    return true;
  }

  void forward(void *q, void *k, void *v, float *alibiSlopes, void *o,
               float *lse, float *descales) override {
    D4 dq = query(q), dk = key(k), dv = value(v), dout = output(o);
    D3 dlse = lseDesc(lse);
    SlopesDesc slopes = slopesDesc(alibiSlopes);
    // [3] per tensor, or [3, B, Hkv] per head.
    MemRefDescriptor<1> perTensor = dense<1>(descales, {3});
    MemRefDescriptor<3> perHead = dense<3>(descales, {3, size.batch, size.kvHeads});
    void *scales = spec.descale == DescaleKind::Head ? static_cast<void *>(&perHead)
                                                     : static_cast<void *>(&perTensor);
    bool alibi = spec.alibi != AlibiKind::None;
    if (spec.dtype == ElementType::F8E4M3FN && alibi)
      reinterpret_cast<DescaledAlibiForwardFn>(forwardFn)(
          &dq, &dk, &dv, scales, slopes.get(), &dout, &dlse);
    else if (spec.dtype == ElementType::F8E4M3FN)
      reinterpret_cast<DescaledForwardFn>(forwardFn)(&dq, &dk, &dv, scales,
                                                     &dout, &dlse);
    else if (alibi)
      reinterpret_cast<AlibiForwardFn>(forwardFn)(&dq, &dk, &dv, slopes.get(),
                                                  &dout, &dlse);
    else
      forwardFn(&dq, &dk, &dv, &dout, &dlse);
  }

  void backward(void *q, void *k, void *v, void *o, void *gradOut, float *lse,
                float *alibiSlopes, void *dq, void *dk, void *dv) override {
    D4 mq = query(q), mk = key(k), mv = value(v), mo = output(o),
       mdo = output(gradOut), mdq = query(dq), mdk = key(dk), mdv = value(dv);
    D3 mlse = lseDesc(lse);
    SlopesDesc slopes = slopesDesc(alibiSlopes);
    if (spec.alibi == AlibiKind::None)
      backwardFn(&mq, &mk, &mv, &mo, &mdo, &mlse, &mdq, &mdk, &mdv);
    else
      reinterpret_cast<AlibiBackwardFn>(backwardFn)(
          &mq, &mk, &mv, &mo, &mdo, &mlse, slopes.get(), &mdq, &mdk, &mdv);
  }

  double compileSeconds() const override { return seconds; }

private:
  D4 query(void *p) {
    return dense<4>(p, {size.batch, size.queryHeads, size.queryLen, spec.headDim});
  }
  D4 key(void *p) {
    return dense<4>(p, {size.batch, size.kvHeads, size.keyLen, spec.headDim});
  }
  D4 value(void *p) {
    return dense<4>(p, {size.batch, size.kvHeads, size.keyLen, spec.valueDim});
  }
  D4 output(void *p) {
    return dense<4>(p, {size.batch, size.queryHeads, size.queryLen, spec.valueDim});
  }
  D3 lseDesc(float *p) {
    return dense<3>(p, {size.batch, size.queryHeads, size.queryLen});
  }
  /// The slopes' descriptor: rank 1 for [Hq], rank 2 for [B, Hq].
  struct SlopesDesc {
    MemRefDescriptor<1> head;
    MemRefDescriptor<2> batchHead;
    bool perBatch;
    void *get() {
      return perBatch ? static_cast<void *>(&batchHead)
                      : static_cast<void *>(&head);
    }
  };
  SlopesDesc slopesDesc(float *p) {
    return {dense<1>(p, {size.queryHeads}),
            dense<2>(p, {size.batch, size.queryHeads}),
            spec.alibi == AlibiKind::BatchHead};
  }

  AttentionSpec spec;
  ProblemSize size;
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  ForwardFn forwardFn = nullptr;
  BackwardFn backwardFn = nullptr;
  double seconds = 0.0;
};

} // namespace

CpuBackend::~CpuBackend() = default;

std::unique_ptr<CpuBackend>
CpuBackend::create(const AttentionSpec &spec, const ProblemSize &size,
                   bool withBackward, NegativeControl control,
                   std::string &error, bool &badInput, const std::string &input) {
  badInput = false;
  auto backend = std::make_unique<JitCpuBackend>(spec, size, control);
  if (!backend->compile(withBackward, control, input, error, badInput))
    return nullptr;
  return backend;
}
