//===- fa-compile.cpp - attention specs to PTX kernels --------------------===//
//
// Part of fa-mlir.
//
//   fa-compile --d 128 --dtype bf16 --mask causal --target sm_80 -o DIR
//   fa-compile attention.mlir --target sm_80 -o DIR
//   fa-compile --standard-set -o kernels_generated/
//
// Writes NAME.ptx and NAME.json (the manifest fa-run and the runtime load).
// --schedule / --bwd-schedule override the chip's schedule knobs
// (docs/tuning.md).
// Exit codes: 0 written, 1 compiler failure, 2 bad input.
//
//===----------------------------------------------------------------------===//

#include "fa/Compiler/KernelCompiler.h"
#include "fa/Conversion/FAToGPU/AttentionKernel.h"
#include "fa/Dialect/FA/IR/FADialect.h"
#include "fa/Dialect/FA/Utils/ParseGuard.h"
#include "fa/Dialect/FA/Utils/PipelineInput.h"
#include "fa/Version.h"
#include "fa/runtime/KernelAbi.h"
#include "fa/runtime/Limits.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

namespace cl = llvm::cl;

/// fa-compile's own options: --help lists these alone (LLVM's hundreds of
/// codegen flags, registered by the libraries it links, stay out of it).
static cl::OptionCategory compileOptions("fa-compile options");

static cl::opt<std::string> inputFile(cl::cat(compileOptions), cl::Positional,
                                      cl::desc("[input.mlir with one fa.attention]"),
                                      cl::init(""));
static cl::opt<std::string> outputDir(cl::cat(compileOptions), "o", cl::desc("output directory"),
                                      cl::init("."));
static cl::opt<int64_t> headDim(cl::cat(compileOptions), "d", cl::desc("head dimension D"), cl::init(0));
static cl::opt<int64_t> valueDim(cl::cat(compileOptions), "dv", cl::desc("value dimension Dv (default: D)"),
                                 cl::init(0));
static cl::opt<std::string> dtype(cl::cat(compileOptions), "dtype", cl::desc("f16 or bf16"),
                                  cl::init("bf16"));
static cl::opt<std::string> mask(cl::cat(compileOptions), "mask",
                                 cl::desc("none, causal, causal_top_left, window(L,R)"),
                                 cl::init("none"));
/// "[lo, hi]" of two of Limits.h's bounds, for --help.
static std::string rangeText(double lo, double hi) {
  char text[64];
  std::snprintf(text, sizeof(text), "[%g, %g]", lo, hi);
  return text;
}
/// --softcap and --scale: LLVM's parser reads an empty value ("--softcap=")
/// as 0, a request for no softcap nobody made; a number is required, as
/// the integer options require an integer.
class NumberParser : public cl::parser<double> {
public:
  using cl::parser<double>::parser;
  bool parse(cl::Option &option, llvm::StringRef, llvm::StringRef arg,
             double &value) {
    if (arg.empty() || arg.getAsDouble(value, /*AllowInexact=*/true))
      return option.error("'" + fa::printableText(arg.str()) +
                          "' is not a number");
    return false;
  }
};

static const std::string softcapHelp =
    "softcap (default 0: off; else in " +
    rangeText(fa::limits::kMinSoftcap, fa::limits::kMaxSoftcap) + ")";
static cl::opt<double, false, NumberParser> softcap(cl::cat(compileOptions), "softcap", cl::desc(softcapHelp), cl::init(0));
static const std::string scaleHelp =
    "score scale (default: 1/sqrt(D); |scale| in " +
    rangeText(fa::limits::kMinAbsScale, fa::limits::kMaxAbsScale) + ")";
static cl::opt<double, false, NumberParser> scale(cl::cat(compileOptions), "scale", cl::desc(scaleHelp), cl::init(0));
static cl::opt<int64_t> blockM(cl::cat(compileOptions), "block-m",
                               cl::desc("query rows per block (default: tuned "
                                        "per D, see docs/tuning.md)"),
                               cl::init(0));
static cl::opt<int64_t> blockN(cl::cat(compileOptions), "block-n",
                               cl::desc("key rows per block (default: tuned)"),
                               cl::init(0));
static cl::opt<int64_t> backwardBlockM(cl::cat(compileOptions), 
    "bwd-block-m", cl::desc("the backward's query rows per block (default: "
                            "tuned per chip and D)"),
    cl::init(0));
static cl::opt<int64_t> backwardBlockN(cl::cat(compileOptions), 
    "bwd-block-n", cl::desc("the backward's key rows per block (default: tuned)"),
    cl::init(0));
static cl::opt<int64_t> sharedMemoryBudget(cl::cat(compileOptions),
    "shared-memory-budget",
    cl::desc("KB of shared memory a block may take (default: the chip's); "
             "tiles past it are refused, the sm_80 D256 backward's tuned tile "
             "grows within it, and a kernel past a device's maximum is "
             "refused when loaded"),
    cl::init(0));
static cl::opt<std::string> schedule(cl::cat(compileOptions),
    "schedule",
    cl::desc("name=value[,name=value...]: the forward's schedule knobs over "
             "the chip's tuned ones, and its stages (docs/tuning.md; the "
             "manifest's \"schedule\" lists a kernel's knobs)"),
    cl::init(""));
static cl::opt<std::string> backwardSchedule(cl::cat(compileOptions),
    "bwd-schedule",
    cl::desc("name=value[,name=value...]: the backward's schedule knobs "
             "(docs/tuning.md)"),
    cl::init(""));
static cl::opt<std::string> alibi(cl::cat(compileOptions), "alibi",
                                  cl::desc("ALiBi slopes: none, head ([Hq]) or "
                                           "batch_head ([B, Hq])"),
                                  cl::init("none"));
static const std::string targetHelp =
    "target chip: " + mlir::fa::registeredChips();
static cl::opt<std::string> target(cl::cat(compileOptions), "target", cl::desc(targetHelp),
                                   cl::init(mlir::fa::defaultChip().str()));
static cl::opt<std::string> name(cl::cat(compileOptions), "name", cl::desc("kernel name (default: from the spec)"),
                                 cl::init(""));
static cl::opt<bool> standardSetFlag(cl::cat(compileOptions), "standard-set",
                                     cl::desc("regenerate the committed standard set"));
static cl::opt<bool> backward(cl::cat(compileOptions), 
    "bwd", cl::desc("also the backward (fa_bwd_...: preprocess, main and "
                    "postprocess kernels in one PTX and one manifest)"));
static cl::opt<bool> deterministic(cl::cat(compileOptions), 
    "deterministic",
    cl::desc("with --bwd: a backward that can add dQ in a fixed order "
             "(bit-identical runs; fa_bwd_..._det, launched with "
             "deterministic)"));
static cl::opt<bool> omitRowDot(cl::cat(compileOptions), 
    "test-omit-row-dot",
    cl::desc("with --bwd: the negative control, a backward without "
             "D = rowsum(dO * O), named NAME_no_row_dot (fa-run "
             "--bwd-kernel runs it and reports a mismatch)"),
    cl::Hidden);

/// Prints "fa-compile: <message>" on stderr, control bytes from the input
/// escaped (printableText), so the report stays the one line it is.
static void printError(const std::string &message) {
  llvm::errs() << "fa-compile: "
               << fa::printableText(message, /*keepNewlines=*/true) << "\n";
}

static int badInput(const std::string &message) {
  printError(message);
  return 2;
}

/// The spec the flags state, built field by field (no flag's text is ever
/// pasted into spec text, so "--mask causal,d=256" is a bad mask, not
/// D = 256). A flag not given takes the default --help names; a flag given
/// is checked with the spec's ranges (fa/runtime/Limits.h).
static bool specOfFlags(fa::AttentionSpec &spec, std::string &error) {
  if (!headDim.getNumOccurrences()) {
    error = "give --d <head dimension> (or an input .mlir, or --standard-set)";
    return false;
  }
  spec.headDim = headDim;
  spec.valueDim = valueDim.getNumOccurrences() ? int64_t(valueDim) : headDim;
  if (spec.headDim < 1 || spec.valueDim < 1) {
    error = "--d and --dv must be >= 1 (got " + std::to_string(spec.headDim) +
            " and " + std::to_string(spec.valueDim) + ")";
    return false;
  }
  if (!fa::parseSpecDtype(dtype, spec.dtype, error) ||
      !fa::parseMask(mask, spec.mask, error) ||
      !fa::parseAlibi(alibi, spec.alibi, error))
    return false;
  spec.softcap = softcap;
  if (scale.getNumOccurrences())
    spec.scale = scale;
  fa::AttentionSpec tuned = spec;
  mlir::fa::applyTunedTile(tuned, target);
  spec.blockM = blockM.getNumOccurrences() ? int64_t(blockM) : tuned.blockM;
  spec.blockN = blockN.getNumOccurrences() ? int64_t(blockN) : tuned.blockN;
  return fa::checkSpec(spec, error);
}

/// The backward of `spec` for `chip` on the chip's tuned backward tile (or
/// --bwd-block-m / --bwd-block-n), named after the forward (`forwardName`,
/// standard or --name): the compiled kernel, or the exit code (2 for what
/// the user can fix) with the reason on stderr.
static int compileBackwardOf(mlir::MLIRContext &context, const fa::AttentionSpec &spec,
                             const std::string &chip, bool conventionalName,
                             const mlir::fa::ScheduleOverrides &knobs,
                             mlir::fa::CompiledKernel &gradients) {
  fa::AttentionSpec backwardSpec = spec;
  mlir::fa::applyTunedBackwardTile(backwardSpec, chip, deterministic,
                                   sharedMemoryBudget);
  if (backwardBlockM.getNumOccurrences())
    backwardSpec.blockM = backwardBlockM;
  if (backwardBlockN.getNumOccurrences())
    backwardSpec.blockN = backwardBlockN;
  std::string error;
  if (!fa::checkBackwardSpec(backwardSpec, error)) {
    printError(error);
    return 2;
  }
  std::string backwardName = mlir::fa::negativeControlKernelName(
      conventionalName ? mlir::fa::backwardKernelName(spec, chip, deterministic)
                       : ::fa::abi::backwardKernelNameOf(name, deterministic),
      omitRowDot);
  bool rejected = false;
  if (!mlir::fa::compileBackwardKernel(context, backwardSpec, chip, backwardName,
                                       gradients, error, rejected, omitRowDot,
                                       deterministic, sharedMemoryBudget, knobs)) {
    printError(backwardName + ": " + error);
    return rejected ? 2 : 1;
  }
  return 0;
}

/// Flags that say two things, or a backward's flags without --bwd: the
/// refusal, or "".
static std::string flagConflict() {
  // cl::opt lets the last of a repeated flag win; a request that says two
  // things is refused instead.
  for (cl::Option *option :
       std::initializer_list<cl::Option *>{
           &outputDir, &headDim, &valueDim, &dtype, &mask,
           &softcap, &scale, &blockM, &blockN, &alibi, &target, &name,
           &standardSetFlag, &backward, &omitRowDot, &deterministic,
           &backwardBlockM, &backwardBlockN, &sharedMemoryBudget, &schedule,
           &backwardSchedule})
    if (option->getNumOccurrences() > 1)
      return "--" + option->ArgStr.str() + " is given more than once";
  if (omitRowDot && !backward)
    return "--test-omit-row-dot builds a backward: give --bwd";
  if (deterministic && !backward)
    return "--deterministic builds a backward: give --bwd";
  if ((backwardBlockM.getNumOccurrences() || backwardBlockN.getNumOccurrences()) &&
      !backward)
    return "--bwd-block-m and --bwd-block-n tile a backward: give --bwd";
  if (backwardSchedule.getNumOccurrences() && !backward)
    return "--bwd-schedule tunes a backward: give --bwd";
  if (!inputFile.empty() &&
      (omitRowDot || deterministic || backwardBlockM.getNumOccurrences() ||
       backwardBlockN.getNumOccurrences() || backwardSchedule.getNumOccurrences()))
    return "an input .mlir's --bwd takes its chip's tuned backward: no "
           "--bwd-block-m/-n, --bwd-schedule, --deterministic or "
           "--test-omit-row-dot";
  return "";
}

/// LLVM's option-parsing errors as one line, each without its
/// "fa-compile: " prefix; the exit code (2). A bad flag value LLVM reports
/// on stderr itself, leaving none here.
static int reportParseErrors(llvm::StringRef parseErrors) {
  llvm::SmallVector<llvm::StringRef> lines;
  parseErrors.split(lines, '\n');
  std::string message;
  for (llvm::StringRef line : lines) {
    line = line.trim();
    line.consume_front("fa-compile:");
    line = line.trim();
    if (!line.empty())
      message += (message.empty() ? "" : "; ") + line.str();
  }
  return message.empty() ? 2 : badInput(message);
}

/// The checks of the request as a whole, before any spec is built: flags
/// that conflict, the shared memory budget, the schedule knobs (parsed into
/// `forwardKnobs` and `backwardKnobs`), and the output directory (created
/// if missing). 0, or the exit code with the reason on stderr.
static int checkRequest(mlir::fa::ScheduleOverrides &forwardKnobs,
                        mlir::fa::ScheduleOverrides &backwardKnobs) {
  if (std::string conflict = flagConflict(); !conflict.empty())
    return badInput(conflict);
  if (std::string budget = mlir::fa::unsupportedSharedMemoryBudget(sharedMemoryBudget);
      !budget.empty())
    return badInput(budget);
  for (auto [option, knobs] :
       {std::pair{&schedule, &forwardKnobs}, {&backwardSchedule, &backwardKnobs}}) {
    std::string error;
    if (option->getNumOccurrences() &&
        !mlir::fa::parseScheduleOverrides(*option, *knobs, error))
      return badInput("--" + option->ArgStr.str() + ": " + error);
  }
  if (!llvm::sys::fs::is_directory(outputDir) &&
      llvm::sys::fs::create_directories(outputDir))
    return badInput("cannot create output directory " + outputDir);
  return 0;
}

/// The kernels the flags ask for into `specs`: the standard set, or the
/// one spec the flags state (none for an input .mlir, which states its
/// own). 0, or the exit code with the reason on stderr.
static int kernelsOfFlags(std::vector<mlir::fa::StandardKernel> &specs) {
  if (standardSetFlag) {
    // Every chip's set, or the one --target names.
    specs = mlir::fa::standardSet(target.getNumOccurrences() ? std::string(target) : std::string());
    if (specs.empty())
      return badInput("the standard set has no kernels for --target " + target);
  } else if (inputFile.empty()) {
    fa::AttentionSpec spec;
    std::string error;
    if (!specOfFlags(spec, error))
      return badInput(error);
    specs.push_back({spec, target});
  }
  if (name.getNumOccurrences())
    if (std::string reason = mlir::fa::unsupportedKernelName(name);
        !reason.empty())
      return badInput("--name " + reason);
  // The standard set and an input .mlir state their own specs: a spec flag
  // beside them would be ignored, so it is refused.
  if (standardSetFlag || !inputFile.empty())
    for (cl::Option *option : std::initializer_list<cl::Option *>{
             &headDim, &valueDim, &dtype, &mask, &softcap, &scale, &blockM,
             &blockN, &backwardBlockM, &backwardBlockN, &alibi, &name,
             &sharedMemoryBudget, &schedule, &backwardSchedule})
      if (option->getNumOccurrences())
        return badInput("--" + option->ArgStr.str() +
                        " describes a kernel built from flags; " +
                        (standardSetFlag ? "--standard-set" : "an input .mlir") +
                        " states its own");
  return 0;
}

/// Writes `kernel` into the output directory and says so on stdout; false
/// (the reason on stderr) if it cannot be written.
static bool emitKernel(const mlir::fa::CompiledKernel &kernel) {
  std::string error;
  if (!mlir::fa::writeKernel(kernel, outputDir, error)) {
    printError(error);
    return false;
  }
  llvm::outs() << "fa-compile: " << outputDir << "/" << kernel.name
               << ".{ptx,json} in " << llvm::format("%.3f", kernel.seconds)
               << " s\n";
  return true;
}

/// The forward kernel of the input .mlir: the exit code.
static int compileInputFile(mlir::MLIRContext &context) {
  std::string readError;
  std::unique_ptr<llvm::MemoryBuffer> text =
      mlir::fa::readGuardedInput(inputFile, readError);
  if (!text)
    return badInput(readError);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(text), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 2;
  // The forward's lowering consumes the module; the backward gets a copy.
  mlir::OwningOpRef<mlir::ModuleOp> forBackward;
  if (backward)
    forBackward = module->clone();
  mlir::fa::CompiledKernel kernel;
  std::string error;
  bool rejected = false;
  if (!mlir::fa::compileForwardModule(context, *module, target, kernel,
                                      error, rejected)) {
    printError(error);
    return rejected ? 2 : 1;
  }
  if (!emitKernel(kernel))
    return 1;
  if (!backward)
    return 0;
  mlir::fa::CompiledKernel backwardKernel;
  if (!mlir::fa::compileBackwardModule(context, *forBackward, target,
                                       backwardKernel, error, rejected)) {
    printError(error);
    return rejected ? 2 : 1;
  }
  return emitKernel(backwardKernel) ? 0 : 1;
}

/// Each of `specs`' forward kernels, and its backward where one is asked
/// for, in order: the exit code. A kernel that cannot be written leaves the
/// others to be built (exit 1 at the end); one that cannot be compiled
/// stops there.
static int compileSpecs(mlir::MLIRContext &context,
                        const std::vector<mlir::fa::StandardKernel> &specs,
                        const mlir::fa::ScheduleOverrides &forwardKnobs,
                        const mlir::fa::ScheduleOverrides &backwardKnobs) {
  int status = 0;
  for (const auto &[spec, chip, standardBackward] : specs) {
    mlir::fa::CompiledKernel kernel;
    std::string error;
    bool rejected = false;
    std::string kernelName = name.empty() || standardSetFlag
                                 ? mlir::fa::kernelName(spec, chip)
                                 : std::string(name);
    if (!mlir::fa::compileForwardKernel(context, spec, chip, kernelName,
                                        kernel, error, rejected,
                                        sharedMemoryBudget, forwardKnobs)) {
      printError(kernelName + ": " + error);
      return rejected ? 2 : 1;
    }
    if (!emitKernel(kernel))
      status = 1;
    if (!(standardSetFlag ? standardBackward : bool(backward)))
      continue;
    mlir::fa::CompiledKernel gradients;
    if (int failure = compileBackwardOf(context, spec, chip,
                                        name.empty() || standardSetFlag,
                                        backwardKnobs, gradients))
      return failure;
    if (!emitKernel(gradients))
      status = 1;
  }
  return status;
}

int main(int argc, char **argv) {
  std::string parseErrors;
  llvm::raw_string_ostream errs(parseErrors);
  cl::HideUnrelatedOptions(compileOptions);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "fa-compile (fa-mlir " << FA_MLIR_VERSION << ", generator "
       << mlir::fa::generatorRevision() << ")\n";
  });
  if (!cl::ParseCommandLineOptions(argc, argv, "fa-compile: attention to PTX\n",
                                   &errs))
    return reportParseErrors(parseErrors);
  mlir::fa::ScheduleOverrides forwardKnobs, backwardKnobs;
  if (int refused = checkRequest(forwardKnobs, backwardKnobs))
    return refused;

  std::unique_ptr<mlir::MLIRContext> context =
      mlir::fa::createCompilerContext();
  std::vector<mlir::fa::StandardKernel> specs;
  if (int refused = kernelsOfFlags(specs))
    return refused;
  if (!inputFile.empty())
    return compileInputFile(*context);
  return compileSpecs(*context, specs, forwardKnobs, backwardKnobs);
}
