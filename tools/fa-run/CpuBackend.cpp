//===- CpuBackend.cpp - fa-run on the host through the ExecutionEngine ----===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"

#include "fa/Compiler/AttentionModule.h"
#include "fa/Compiler/KernelCompiler.h"
#include "fa/Compiler/VariantProgram.h"
#include "fa/Conversion/Passes.h"
#include "fa/Dialect/FA/IR/FADialect.h"
#include "fa/Dialect/FA/IR/FAOps.h"
#include "fa/runtime/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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
#include <random>

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
      module = loadRaisedInput(*context, input, spec, size, withBackward, error,
                               badInput);
      if (!module || !takeVariant(control, error, badInput))
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
    options.testOmitScoreModGrad = control == NegativeControl::NoScoreModGrad;
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
    if (!captureTypes.empty())
      invokeWithCaptures("_mlir_ciface_fa_forward", {&dq, &dk, &dv},
                         {&dout, &dlse});
    else if (spec.dtype == ElementType::F8E4M3FN && alibi)
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
    if (!captureTypes.empty())
      invokeWithCaptures("_mlir_ciface_fa_backward",
                         {&mq, &mk, &mv, &mo, &mdo, &mlse}, {&mdq, &mdk, &mdv});
    else if (spec.alibi == AlibiKind::None)
      backwardFn(&mq, &mk, &mv, &mo, &mdo, &mlse, &mdq, &mdk, &mdv);
    else
      reinterpret_cast<AlibiBackwardFn>(backwardFn)(
          &mq, &mk, &mv, &mo, &mdo, &mlse, slopes.get(), &mdq, &mdk, &mdv);
  }

  std::vector<CaptureValue> drawCaptures(uint64_t seed) override {
    captureValues = fa::drawCaptures(variant.captures, seed, captureBytes);
    return captureValues;
  }

  void bindVariantRegions(ref::Problem &problem) override {
    if (!variant.scoreMod.empty())
      problem.scoreMod = scoreModOf(variant.scoreMod, captureValues);
    if (!variant.maskMod.empty())
      problem.maskMod = maskModOf(variant.maskMod, captureValues);
  }

  bool computesLse() const override {
    return !fromInput || hasRegions;
  }

  double compileSeconds() const override { return seconds; }

private:
  /// Keeps the --input's fa.attention as written (the reference reads its
  /// regions) and its captured types; with the no-regions control, the
  /// module's regions become the identity score and the all-visible mask.
  bool takeVariant(NegativeControl control, std::string &error,
                   bool &badInput) {
    fromInput = true;
    mlir::fa::AttentionOp attention;
    module->walk([&](mlir::fa::AttentionOp op) { attention = op; });
    // The reference reads the regions as written, before any pass.
    if (!mlir::fa::variantOf(attention, variant, error)) {
      badInput = true;
      error = "--input: " + error;
      return false;
    }
    for (const CaptureType &type : variant.captures)
      if (llvm::is_contained(type.shape, CaptureType::kDynamicExtent)) {
        badInput = true;
        error = "--input: fa-run draws captured tensors of static shapes";
        return false;
      }
    for (mlir::Type type : attention.getCaptures().getTypes())
      captureTypes.push_back(type);
    hasRegions =
        !attention.getScoreMod().empty() || !attention.getMaskMod().empty();
    if (control != NegativeControl::NoRegions)
      return true;
    if (attention.getScoreMod().empty() && attention.getMaskMod().empty()) {
      badInput = true;
      error = "--negative-control no-regions: the --input's fa.attention has "
              "no score_mod or mask_mod";
      return false;
    }
    module->walk([&](mlir::Operation *op) {
      if (auto fwd = llvm::dyn_cast<mlir::fa::AttentionOp>(op))
        neuterRegions(fwd.getScoreMod(), fwd.getMaskMod());
      if (auto bwd = llvm::dyn_cast<mlir::fa::AttentionGradOp>(op))
        neuterRegions(bwd.getScoreMod(), bwd.getMaskMod());
    });
    return true;
  }

  /// The no-regions control: the score_mod yields its score, the mask_mod
  /// true.
  static void neuterRegions(mlir::Region &scoreMod, mlir::Region &maskMod) {
    for (mlir::Region *region : {&scoreMod, &maskMod}) {
      if (region->empty())
        continue;
      mlir::Block &body = region->front();
      auto yield = llvm::cast<mlir::fa::YieldOp>(body.getTerminator());
      mlir::OpBuilder b(yield);
      mlir::Value identity =
          region == &scoreMod
              ? mlir::Value(body.getArgument(0))
              : mlir::Value(mlir::arith::ConstantOp::create(
                    b, yield.getLoc(), b.getBoolAttr(true)));
      yield->setOperand(0, identity);
    }
  }

  /// An entry of a variant (VariantEntries.cpp) through the packed
  /// interface, whose arity depends on the --input: the `inputs`
  /// descriptors, the captured values, then the `outputs` descriptors.
  void invokeWithCaptures(const char *entry, llvm::ArrayRef<void *> inputs,
                          llvm::ArrayRef<void *> outputs) {
    // The packed interface takes each argument's address: a memref's is
    // that of its descriptor pointer, a scalar's that of its value.
    std::vector<void *> in(inputs.begin(), inputs.end());
    std::vector<void *> out(outputs.begin(), outputs.end());
    // A captured memref's descriptor: allocated, aligned, offset, sizes,
    // strides (row-major).
    std::vector<std::vector<int64_t>> descriptors(captureTypes.size());
    std::vector<void *> descriptorPointers(captureTypes.size());
    llvm::SmallVector<void *> args;
    for (void *&descriptor : in)
      args.push_back(&descriptor);
    for (size_t c = 0; c < captureTypes.size(); ++c) {
      void *data = captureBytes[c].data();
      if (!llvm::isa<mlir::RankedTensorType>(captureTypes[c])) {
        args.push_back(data);
        continue;
      }
      const std::vector<int64_t> &shape = captureValues[c].shape;
      std::vector<int64_t> &d = descriptors[c];
      d = {reinterpret_cast<int64_t>(data), reinterpret_cast<int64_t>(data), 0};
      d.insert(d.end(), shape.begin(), shape.end());
      std::vector<int64_t> strides(shape.size(), 1);
      for (size_t i = shape.size(); i-- > 1;)
        strides[i - 1] = strides[i] * shape[i];
      d.insert(d.end(), strides.begin(), strides.end());
      descriptorPointers[c] = d.data();
      args.push_back(&descriptorPointers[c]);
    }
    for (void *&descriptor : out)
      args.push_back(&descriptor);
    llvm::cantFail(engine->invokePacked(entry, args));
  }

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
  /// An --input with variant regions: its fa.attention as written, its
  /// captured types, and the drawn captures (storage and values).
  bool fromInput = false; ///< compiled from --input
  Variant variant;        ///< the --input's regions, as written
  std::vector<mlir::Type> captureTypes;
  std::vector<std::vector<uint8_t>> captureBytes;
  std::vector<CaptureValue> captureValues;
  bool hasRegions = false;
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
