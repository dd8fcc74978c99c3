//===- fa-compile.cpp - attention specs to PTX kernels --------------------===//
//
// Part of fa-mlir.
//
//   fa-compile --d 128 --dtype bf16 --mask causal --target sm_80 -o DIR
//   fa-compile attention.mlir --target sm_80 -o DIR
//   fa-compile --standard-set -o kernels_generated/
//
// Writes NAME.ptx and NAME.json (the manifest fa-run and the runtime load).
// Exit codes: 0 written, 1 compiler failure, 2 bad input.
//
//===----------------------------------------------------------------------===//

#include "fa/Compiler/KernelCompiler.h"
#include "fa/Conversion/FAToGPU/AttentionKernel.h"
#include "fa/Dialect/FA/IR/FADialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <sstream>

namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("[input.mlir with one fa.attention]"),
                                      cl::init(""));
static cl::opt<std::string> outputDir("o", cl::desc("output directory"),
                                      cl::init("."));
static cl::opt<int64_t> headDim("d", cl::desc("head dimension D"), cl::init(0));
static cl::opt<int64_t> valueDim("dv", cl::desc("value dimension Dv (default D)"),
                                 cl::init(0));
static cl::opt<std::string> dtype("dtype", cl::desc("f16 or bf16"),
                                  cl::init("bf16"));
static cl::opt<std::string> mask("mask",
                                 cl::desc("none, causal, causal_top_left, window(L,R)"),
                                 cl::init("none"));
static cl::opt<double> softcap("softcap", cl::desc("softcap (0: off)"), cl::init(0));
static cl::opt<double> scale("scale", cl::desc("score scale (default 1/sqrt(D))"),
                             cl::init(0));
static cl::opt<int64_t> blockM("block-m",
                               cl::desc("query rows per block (default: tuned "
                                        "per D, see docs/perf-notes.md)"),
                               cl::init(0));
static cl::opt<int64_t> blockN("block-n",
                               cl::desc("key rows per block (default: tuned)"),
                               cl::init(0));
static cl::opt<std::string> alibi("alibi",
                                  cl::desc("ALiBi slopes: none, head ([Hq]) or "
                                           "batch_head ([B, Hq])"),
                                  cl::init("none"));
static const std::string targetHelp =
    "target chip: " + mlir::fa::registeredChips();
static cl::opt<std::string> target("target", cl::desc(targetHelp),
                                   cl::init(mlir::fa::defaultChip().str()));
static cl::opt<std::string> name("name", cl::desc("kernel name (default: from the spec)"),
                                 cl::init(""));
static cl::opt<bool> standardSetFlag("standard-set",
                                     cl::desc("regenerate the committed standard set"));
static cl::opt<bool> backward("bwd", cl::desc("also a backward kernel"));

static int badInput(const std::string &message) {
  llvm::errs() << "fa-compile: " << message << "\n";
  return 2;
}

int main(int argc, char **argv) {
  std::string parseErrors;
  llvm::raw_string_ostream errs(parseErrors);
  if (!cl::ParseCommandLineOptions(argc, argv, "fa-compile: attention to PTX\n",
                                   &errs))
    return badInput(llvm::StringRef(parseErrors).trim().str());
  if (backward)
    return badInput("--bwd: GPU backward kernels are not generated yet "
                    "(the backward runs on --device cpu through fa-run)");
  if (!llvm::sys::fs::is_directory(outputDir) &&
      llvm::sys::fs::create_directories(outputDir))
    return badInput("cannot create output directory " + outputDir);

  std::unique_ptr<mlir::MLIRContext> contextOwner =
      mlir::fa::createCompilerContext();
  mlir::MLIRContext &context = *contextOwner;

  std::vector<fa::AttentionSpec> specs;
  if (standardSetFlag) {
    specs = mlir::fa::standardSet();
  } else if (inputFile.empty()) {
    std::ostringstream text;
    text << "d=" << headDim << ",dtype=" << dtype << ",mask=" << mask;
    if (blockM)
      text << ",block_m=" << blockM;
    if (blockN)
      text << ",block_n=" << blockN;
    if (valueDim)
      text << ",dv=" << valueDim;
    if (softcap)
      text << ",softcap=" << softcap;
    if (scale)
      text << ",scale=" << scale;
    text << ",alibi=" << alibi;
    fa::AttentionSpec spec;
    std::string error;
    if (headDim <= 0)
      return badInput("give --d <head dimension> (or an input .mlir, or --standard-set)");
    if (!fa::parseSpec(text.str(), spec, error))
      return badInput(error);
    fa::AttentionSpec tuned = spec;
    mlir::fa::applyTunedTile(tuned);
    if (!blockM)
      spec.blockM = tuned.blockM;
    if (!blockN)
      spec.blockN = tuned.blockN;
    specs.push_back(spec);
  }

  int status = 0;
  auto emit = [&](mlir::fa::CompiledKernel &kernel) {
    std::string error;
    if (!mlir::fa::writeKernel(kernel, outputDir, error)) {
      llvm::errs() << "fa-compile: " << error << "\n";
      status = 1;
      return;
    }
    llvm::outs() << "fa-compile: " << outputDir << "/" << kernel.name
                 << ".{ptx,json} in " << llvm::format("%.3f", kernel.seconds)
                 << " s\n";
  };

  if (!inputFile.empty()) {
    llvm::SourceMgr sourceMgr;
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceFile<mlir::ModuleOp>(inputFile, sourceMgr, &context);
    if (!module)
      return 2;
    mlir::fa::CompiledKernel kernel;
    std::string error;
    bool rejected = false;
    if (!mlir::fa::compileForwardModule(context, *module, target, kernel,
                                        error, rejected)) {
      llvm::errs() << "fa-compile: " << error << "\n";
      return rejected ? 2 : 1;
    }
    emit(kernel);
    return status;
  }

  for (const fa::AttentionSpec &spec : specs) {
    mlir::fa::CompiledKernel kernel;
    std::string error;
    bool rejected = false;
    std::string kernelName = name.empty() || standardSetFlag
                                 ? mlir::fa::kernelName(spec, target)
                                 : std::string(name);
    if (!mlir::fa::compileForwardKernel(context, spec, target, kernelName,
                                        kernel, error, rejected)) {
      llvm::errs() << "fa-compile: " << kernelName << ": " << error << "\n";
      return rejected ? 2 : 1;
    }
    emit(kernel);
  }
  return status;
}
