//===- fa-fuzz-mlir.cpp - libFuzzer target: MLIR input and the fa passes --===//
//
// Part of fa-mlir.
//
// Parses the bytes as MLIR with the fa dialect and every upstream dialect
// registered (what fa-opt accepts), verifies the module, then runs each fa
// pass on its own copy of it:
//
//   fa-tile, fa-fuse-online-softmax, fa-recompute-backward,
//   fa-check-no-quadratic-buffers, fa-io-report,
//   fa-raise-attention + fa-tile + fa-fuse-online-softmax,
//   fa-tile + fa-fuse-online-softmax + convert-fa-tile-to-linalg,
//   fa-gpu-distribute{chip=sm_80}, fa-gpu-lower-fragments{chip=sm_80},
//   fa-tile + fa-fuse-online-softmax + fa-gpu-distribute{chip=sm_80}
//     + fa-gpu-lower-fragments{chip=sm_80}.
//
// A parse, verification or pass failure is fine (that is a diagnostic); a
// crash or a sanitizer report is a finding. Every input gets a fresh
// MLIRContext (single-threaded, dialects loaded on demand), so nothing
// uniqued by one input survives into the next; diagnostics are swallowed.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/Passes.h"
#include "fa/Dialect/FA/IR/FADialect.h"
#include "fa/Dialect/FA/Utils/ParseGuard.h"
#include "fa/Dialect/FA/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>
#include <fcntl.h>
#include <functional>
#include <unistd.h>

using namespace mlir;

/// Inputs longer than this are skipped: the lit inputs are a few KB.
static constexpr size_t kMaxInputBytes = 64 * 1024;

/// The registry fa-opt and createCompilerContext use, built once.
static const DialectRegistry &registry() {
  static const DialectRegistry *instance = [] {
    auto *r = new DialectRegistry();
    r->insert<fa::FADialect>();
    registerAllDialects(*r);
    registerAllExtensions(*r);
    return r;
  }();
  return *instance;
}

/// Adds one pass pipeline's passes to `pm`.
using PipelineBuilder = std::function<void(OpPassManager &pm)>;

/// The pipelines every verified input goes through, each on its own clone.
static const std::vector<PipelineBuilder> &pipelines() {
  static const std::vector<PipelineBuilder> instance = [] {
    auto tileAndFuse = [](OpPassManager &pm) {
      pm.addNestedPass<func::FuncOp>(fa::createFATile());
      pm.addNestedPass<func::FuncOp>(fa::createFAFuseOnlineSoftmax());
    };
    std::vector<PipelineBuilder> list;
    list.push_back([](OpPassManager &pm) {
      pm.addNestedPass<func::FuncOp>(fa::createFATile());
    });
    list.push_back([](OpPassManager &pm) {
      pm.addNestedPass<func::FuncOp>(fa::createFAFuseOnlineSoftmax());
    });
    list.push_back([](OpPassManager &pm) {
      pm.addNestedPass<func::FuncOp>(fa::createFARecomputeBackward());
    });
    list.push_back([](OpPassManager &pm) {
      fa::FACheckNoQuadraticBuffersOptions options;
      options.queryLen = 1000;
      options.keyLen = 1500;
      pm.addNestedPass<func::FuncOp>(
          fa::createFACheckNoQuadraticBuffers(options));
    });
    list.push_back(
        [](OpPassManager &pm) { pm.addPass(fa::createFAIOReport()); });
    // Raised attention goes on through the pipeline.
    list.push_back([tileAndFuse](OpPassManager &pm) {
      pm.addNestedPass<func::FuncOp>(fa::createFARaiseAttention());
      tileAndFuse(pm);
    });
    list.push_back([tileAndFuse](OpPassManager &pm) {
      tileAndFuse(pm);
      pm.addNestedPass<func::FuncOp>(fa::createConvertFATileToLinalg());
    });
    // The GPU passes also run on the input as it is: fa.gpu / fa.tile input
    // reaches them without going through fa-tile.
    list.push_back([](OpPassManager &pm) {
      fa::FAGPUDistributeOptions distribute;
      distribute.chip = "sm_80";
      pm.addPass(fa::createFAGPUDistribute(distribute));
    });
    list.push_back([](OpPassManager &pm) {
      fa::FAGPULowerFragmentsOptions lower;
      lower.chip = "sm_80";
      pm.addPass(fa::createFAGPULowerFragments(lower));
    });
    list.push_back([tileAndFuse](OpPassManager &pm) {
      tileAndFuse(pm);
      fa::FAGPUDistributeOptions distribute;
      distribute.chip = "sm_80";
      pm.addPass(fa::createFAGPUDistribute(distribute));
      fa::FAGPULowerFragmentsOptions lower;
      lower.chip = "sm_80";
      pm.addPass(fa::createFAGPULowerFragments(lower));
    });
    return list;
  }();
  return instance;
}

/// LLVM's BumpPtrAllocator (the attribute and type uniquer's) poisons a new
/// slab and unpoisons each allocation from it, but only in code compiled with
/// ASan: ours is, Debian's libMLIR.so is not. A slab our inline copy of the
/// allocator poisoned is then written by libMLIR's copy, which never
/// unpoisons, and ASan reports a use-after-poison that is not a bug (the
/// first 30-minute run hit one in DenseArrayAttr::get). Manual poisoning is
/// therefore off; real heap errors are still caught by ASan's own redzones.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  (void)registry();
  (void)pipelines();
  // fa-io-report prints its table to stdout; libFuzzer reports on stderr.
  int devNull = open("/dev/null", O_WRONLY);
  if (devNull >= 0) {
    dup2(devNull, STDOUT_FILENO);
    close(devNull);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Input that crashes upstream's own parser (fa/Dialect/FA/Utils/
  // ParseGuard.h) is skipped, as the tools refuse it.
  if (size > kMaxInputBytes ||
      fa::findUpstreamIntegerListHazard(llvm::StringRef(
          reinterpret_cast<const char *>(data), size)) != llvm::StringRef::npos)
    return -1;
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  // Swallow every diagnostic: a refusal is a correct answer to bad input.
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &) {
    return success();
  });

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz-input"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module || failed(verify(*module)))
    return 0;

  for (const PipelineBuilder &build : pipelines()) {
    OwningOpRef<ModuleOp> copy = module->clone();
    PassManager pm(&context, ModuleOp::getOperationName());
    build(pm);
    (void)pm.run(*copy);
  }
  return 0;
}
