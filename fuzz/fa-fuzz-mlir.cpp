//===- fa-fuzz-mlir.cpp - libFuzzer target: MLIR input and the fa passes --===//
//
// Part of fa-mlir.
//
// Parses the bytes as MLIR with the fa dialect and every upstream dialect
// registered (what fa-opt accepts), verifies the module, then runs
// pipelines on their own copies of it: each fa pass alone and the tile /
// fuse / linalg / distribute chains, and one of the end-to-end pipelines a
// user runs, picked by the input's hash (fa-compile-cpu, fa-to-cpu,
// convert-fa-to-gpu, fa-to-ptx for sm_80 and sm_90a up to LLVM's code
// generation, forward and backward, deterministic too, and after
// fa-raise-attention).
//
// A parse, verification or pass failure is fine (that is a diagnostic). A
// finding is a crash, a sanitizer report, or one of three checks on what a
// pipeline did:
//
//   * round trip: the output of a pipeline that succeeded is printed and
//     must parse (and verify) again, or a pass built IR the parser refuses
//     (fa-recompute-backward's "#fa.tile<block_n = 3>");
//   * internal errors: a pipeline that fails must fail on what the input
//     holds. An error that names an op (MLIR's "'linalg.generic' op ..."
//     or "failed to legalize operation 'X'") the input did not contain
//     means a pass built IR that does not verify, or met IR it did not
//     expect, instead of refusing the input up front;
//   * PTX names: a symbol in a gpu.module the output holds is one LLVM's
//     PTX code generation can spell (it aborts the process on any other).
//
// Every input gets a fresh MLIRContext (single-threaded, dialects loaded on
// demand), so nothing uniqued by one input survives into the next.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/Passes.h"
#include "fa/Dialect/FA/IR/FADialect.h"
#include "fa/Dialect/FA/Utils/ParseGuard.h"
#include "fa/Dialect/FA/Transforms/Passes.h"
#include "fa/Dialect/FA/Utils/PipelineInput.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
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
    // gpu-module-to-binary (fa-to-ptx) translates kernels to LLVM IR.
    registerAllToLLVMIRTranslations(*r);
    return r;
  }();
  return *instance;
}

/// One pipeline: a name for the finding's report, and its passes.
/// The names of the symbols in `module`'s gpu.modules.
static llvm::StringSet<> gpuModuleSymbols(Operation *module) {
  llvm::StringSet<> names;
  module->walk([&](Operation *op) {
    Operation *parent = op->getParentOp();
    auto name = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (name && parent && isa<gpu::GPUModuleOp>(parent))
      names.insert(name.getValue());
  });
  return names;
}

struct Pipeline {
  const char *name;
  std::function<void(OpPassManager &pm)> build;
};

/// Two lists: each fa pass and the chains between them, which every
/// verified input goes through; and the end-to-end pipelines, of which each
/// input goes through the one its hash picks (all of them would cost each
/// input a second and more; the mutations spread the picks). Each runs on
/// its own clone of the module.
struct Pipelines {
  std::vector<Pipeline> passes, endToEnd;
};

static const Pipelines &pipelines() {
  static const Pipelines instance = [] {
    auto tileAndFuse = [](OpPassManager &pm) {
      pm.addNestedPass<func::FuncOp>(fa::createFATile());
      pm.addNestedPass<func::FuncOp>(fa::createFAFuseOnlineSoftmax());
    };
    auto distribute = [](OpPassManager &pm, const char *chip) {
      fa::FAGPUDistributeOptions options;
      options.chip = chip;
      pm.addPass(fa::createFAGPUDistribute(options));
    };
    auto lower = [](OpPassManager &pm, const char *chip) {
      fa::FAGPULowerFragmentsOptions options;
      options.chip = chip;
      pm.addPass(fa::createFAGPULowerFragments(options));
    };
    // fa-to-ptx up to its gpu-module-to-binary: LLVM's code generation
    // would cost each input some 0.3 s (the kernels' names, on which it
    // aborted, are checked after the run instead).
    auto toNVVM = [](OpPassManager &pm, const char *chip, bool deterministic) {
      fa::FAToPTXOptions options;
      options.chip = chip;
      options.deterministic = deterministic;
      fa::buildFAToNVVMPipeline(pm, options);
    };
    auto raise = [](OpPassManager &pm) {
      pm.addNestedPass<func::FuncOp>(fa::createFARaiseAttention());
    };
    Pipelines list;
    std::vector<Pipeline> &passes = list.passes;
    // Each fa pass alone, on the input as it is.
    passes.push_back({"fa-tile", [](OpPassManager &pm) {
                        pm.addNestedPass<func::FuncOp>(fa::createFATile());
                      }});
    passes.push_back({"fa-fuse-online-softmax", [](OpPassManager &pm) {
                        pm.addNestedPass<func::FuncOp>(
                            fa::createFAFuseOnlineSoftmax());
                      }});
    passes.push_back({"fa-recompute-backward", [](OpPassManager &pm) {
                        pm.addNestedPass<func::FuncOp>(
                            fa::createFARecomputeBackward());
                      }});
    passes.push_back({"fa-check-no-quadratic-buffers", [](OpPassManager &pm) {
                        fa::FACheckNoQuadraticBuffersOptions options;
                        options.queryLen = 1000;
                        options.keyLen = 1500;
                        pm.addNestedPass<func::FuncOp>(
                            fa::createFACheckNoQuadraticBuffers(options));
                      }});
    passes.push_back({"fa-io-report", [](OpPassManager &pm) {
                        pm.addPass(fa::createFAIOReport());
                      }});
    passes.push_back({"convert-fa-tile-to-linalg", [](OpPassManager &pm) {
                        pm.addNestedPass<func::FuncOp>(
                            fa::createConvertFATileToLinalg());
                      }});
    // The GPU passes also run on the input as it is: fa.gpu / fa.tile input
    // reaches them without going through fa-tile.
    passes.push_back({"fa-gpu-distribute{chip=sm_80}",
                      [distribute](OpPassManager &pm) {
                        distribute(pm, "sm_80");
                      }});
    passes.push_back({"fa-gpu-lower-fragments{chip=sm_80}",
                      [lower](OpPassManager &pm) { lower(pm, "sm_80"); }});
    passes.push_back({"fa-gpu-lower-fragments{chip=sm_90a}",
                      [lower](OpPassManager &pm) { lower(pm, "sm_90a"); }});
    // The chains between them.
    passes.push_back({"fa-raise-attention,fa-tile,fa-fuse-online-softmax",
                      [raise, tileAndFuse](OpPassManager &pm) {
                        raise(pm);
                        tileAndFuse(pm);
                      }});
    passes.push_back(
        {"fa-tile,fa-fuse-online-softmax,convert-fa-tile-to-linalg",
         [tileAndFuse](OpPassManager &pm) {
           tileAndFuse(pm);
           pm.addNestedPass<func::FuncOp>(fa::createConvertFATileToLinalg());
         }});
    passes.push_back({"fa-tile,fa-fuse-online-softmax,fa-gpu-distribute,"
                      "fa-gpu-lower-fragments{chip=sm_80}",
                      [tileAndFuse, distribute, lower](OpPassManager &pm) {
                        tileAndFuse(pm);
                        distribute(pm, "sm_80");
                        lower(pm, "sm_80");
                      }});
    // The end-to-end pipelines: the CPU's, and the GPU's for each chip, the
    // backward's deterministic mode, and each after fa-raise-attention.
    // fa.attention_grad takes the backward's path through all of them.
    std::vector<Pipeline> &endToEnd = list.endToEnd;
    endToEnd.push_back({"fa-compile-cpu", [](OpPassManager &pm) {
                          fa::buildFACompileCPUPipeline(pm,
                                                        fa::FAPipelineOptions());
                        }});
    endToEnd.push_back({"fa-to-cpu", [](OpPassManager &pm) {
                          fa::buildFAToCPUPipeline(pm);
                        }});
    endToEnd.push_back({"convert-fa-to-gpu{chip=sm_90a}", [](OpPassManager &pm) {
                          fa::buildConvertFAToGPUPipeline(pm, "sm_90a");
                        }});
    endToEnd.push_back({"fa-to-ptx{chip=sm_80} (to NVVM)",
                        [toNVVM](OpPassManager &pm) {
                          toNVVM(pm, "sm_80", false);
                        }});
    endToEnd.push_back({"fa-to-ptx{chip=sm_90a} (to NVVM)",
                        [toNVVM](OpPassManager &pm) {
                          toNVVM(pm, "sm_90a", false);
                        }});
    endToEnd.push_back({"fa-to-ptx{chip=sm_80 deterministic} (to NVVM)",
                        [toNVVM](OpPassManager &pm) {
                          toNVVM(pm, "sm_80", true);
                        }});
    endToEnd.push_back({"fa-to-ptx{chip=sm_90a deterministic} (to NVVM)",
                        [toNVVM](OpPassManager &pm) {
                          toNVVM(pm, "sm_90a", true);
                        }});
    endToEnd.push_back({"fa-raise-attention,fa-compile-cpu",
                        [raise](OpPassManager &pm) {
                          raise(pm);
                          fa::buildFACompileCPUPipeline(pm,
                                                        fa::FAPipelineOptions());
                        }});
    endToEnd.push_back({"fa-raise-attention,fa-to-ptx{chip=sm_80} (to NVVM)",
                        [raise, toNVVM](OpPassManager &pm) {
                          raise(pm);
                          toNVVM(pm, "sm_80", false);
                        }});
    endToEnd.push_back({"fa-raise-attention,fa-to-ptx{chip=sm_90a} (to NVVM)",
                        [raise, toNVVM](OpPassManager &pm) {
                          raise(pm);
                          toNVVM(pm, "sm_90a", false);
                        }});
    return list;
  }();
  return instance;
}

/// A finding: says what and where on stderr, then aborts (libFuzzer
/// reports the input as a crash).
[[noreturn]] static void finding(const Pipeline &pipeline, const Twine &what) {
  llvm::errs() << "fa-fuzz-mlir: after " << pipeline.name << ": " << what
               << "\n";
  llvm::errs().flush();
  std::abort();
}

/// The op an error names where MLIR's own words put one: "'X' op ..."
/// (emitOpError) or "failed to legalize operation 'X'" (the dialect
/// conversion), if X is a registered op; else "".
static StringRef namedOp(MLIRContext &context, StringRef message) {
  StringRef name;
  if (message.starts_with("'")) {
    StringRef rest = message.drop_front();
    size_t end = rest.find("' op ");
    if (end != StringRef::npos)
      name = rest.take_front(end);
  } else if (message.consume_front("failed to legalize operation '")) {
    name = message.take_until([](char c) { return c == '\''; });
  }
  return !name.empty() && RegisteredOperationName::lookup(name, &context)
             ? name
             : StringRef();
}

/// Every op name in `module`.
static llvm::StringSet<> opNames(ModuleOp module) {
  llvm::StringSet<> names;
  module->walk([&](Operation *op) { names.insert(op->getName().getStringRef()); });
  return names;
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

/// Runs `pipeline` on a clone of `module` and checks what it did: the
/// errors of a failed run, the output of a successful one.
static void runPipeline(MLIRContext &context, ModuleOp module,
                        const llvm::StringSet<> &inputOps,
                        const Pipeline &pipeline) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(&context, ModuleOp::getOperationName());
  pipeline.build(pm);
  // The errors the pipeline reports, each checked for an op the input did
  // not hold.
  std::string foreign;
  {
    ScopedDiagnosticHandler errors(&context, [&](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error || !foreign.empty())
        return success();
      std::string message = diag.str();
      StringRef op = namedOp(context, message);
      if (!op.empty() && !inputOps.contains(op))
        foreign = message;
      return success();
    });
    if (failed(pm.run(*copy))) {
      if (!foreign.empty())
        finding(pipeline, "an error names an op the input did not contain "
                          "(a pass built IR that does not verify, or met IR "
                          "it did not expect): " + foreign);
      return;
    }
  }
  // Each PTX symbol (a gpu.module's functions) a pipeline made is one LLVM
  // can spell: it aborts the process on any other. A gpu.module the input
  // already held passes through a pass untouched; the PTX pipelines refuse
  // its bad names at their input check.
  llvm::StringSet<> inputSymbols = gpuModuleSymbols(module);
  copy->walk([&](Operation *op) {
    Operation *parent = op->getParentOp();
    auto name = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (!name || !parent || !isa<gpu::GPUModuleOp>(parent) ||
        inputSymbols.contains(name.getValue()))
      return;
    if (std::string reason = fa::unsupportedKernelName(name.getValue());
        !reason.empty())
      finding(pipeline, "a symbol in a gpu.module, " + reason +
                            ": LLVM would abort on it");
  });
  // What a pipeline made must read back as it printed.
  std::string text;
  llvm::raw_string_ostream os(text);
  copy->print(os);
  std::string parseError;
  ScopedDiagnosticHandler parseErrors(&context, [&](Diagnostic &diag) {
    if (parseError.empty())
      parseError = diag.str();
    return success();
  });
  if (!parseSourceString<ModuleOp>(text, ParserConfig(&context)))
    finding(pipeline, "the output does not parse back: " + parseError);
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

  llvm::StringSet<> inputOps = opNames(*module);
  const Pipelines &all = pipelines();
  std::vector<const Pipeline *> chosen;
  for (const Pipeline &pipeline : all.passes)
    chosen.push_back(&pipeline);
  chosen.push_back(&all.endToEnd[llvm::xxh3_64bits(llvm::ArrayRef(data, size)) %
                                 all.endToEnd.size()]);
  for (const Pipeline *pipeline : chosen)
    runPipeline(context, *module, inputOps, *pipeline);
  return 0;
}
