//===- fa-opt.cpp - The fa-mlir optimizer driver --------------------------===//
//
// Part of fa-mlir.
//
// mlir-opt with the fa dialect and passes added: every upstream dialect and
// pass is registered too, so a user can run any fa pass next to the upstream
// lowering it feeds (scf, memref, gpu, nvgpu, nvvm, llvm, ...).
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/Passes.h"
#include "fa/Dialect/FA/IR/FADialect.h"
#include "fa/Dialect/FA/Utils/ParseGuard.h"
#include "fa/Dialect/FA/Transforms/Passes.h"
#include "fa/Version.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

// FA_GENERATOR_REVISION (lib/Compiler/GeneratorRevision.cmake).
#include "GeneratorRevision.inc"

// The test passes (test/lib): one part of a schedule on hand-written IR.
namespace mlir {
namespace fa {
namespace test {
void registerTestE4M3TransposePass();
void registerTestIrMotionPass();
void registerTestOutputStagingPass();
void registerTestPingpongPass();
void registerTestTmaRingPass();
} // namespace test
} // namespace fa
} // namespace mlir

static void registerTestPasses() {
  mlir::fa::test::registerTestE4M3TransposePass();
  mlir::fa::test::registerTestIrMotionPass();
  mlir::fa::test::registerTestOutputStagingPass();
  mlir::fa::test::registerTestPingpongPass();
  mlir::fa::test::registerTestTmaRingPass();
}

/// Gives the registered boolean option `name` the default `value`, before
/// the command line is parsed (so an explicit setting still wins).
static void setOptionDefault(llvm::StringRef name, bool value) {
  llvm::DenseMap<llvm::StringRef, llvm::cl::Option *> &options =
      llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  if (it == options.end())
    return;
  static_cast<llvm::cl::opt<bool> *>(it->second)->setInitialValue(value);
}

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::fa::registerFAPasses();
  mlir::fa::registerFAConversionPassesAndPipelines();
  registerTestPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::fa::FADialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates gpu.module bodies to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);

  // --version: fa-mlir's, then LLVM's (as mlir-opt prints it).
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "fa-opt (fa-mlir " << FA_MLIR_VERSION << ", generator "
       << FA_GENERATOR_REVISION << ")\n";
  });
  // A pass that refuses its input says why in one line: the note printing
  // the whole op after it (upstream's default) is there on request only,
  // with --mlir-print-op-on-diagnostic=true.
  mlir::registerMLIRContextCLOptions();
  setOptionDefault("mlir-print-op-on-diagnostic", false);
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "fa-mlir optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  // A bad pass option ("--fa-tile=block-m=x"): LLVM's option parser prints
  // the reason on stderr itself and hands MLIR an empty message, which
  // would add a line "<unknown>:0: error: " saying nothing (a textual
  // pipeline appends "\nfailed to add `fa-tile` ..." to it: that context
  // is kept, on one line of its own).
  config.setPassPipelineSetupFn([options = config](mlir::PassManager &pm) {
    mlir::ScopedDiagnosticHandler reasonless(
        pm.getContext(), [](mlir::Diagnostic &diag) {
          std::string message = diag.str();
          if (diag.getSeverity() != mlir::DiagnosticSeverity::Error ||
              !mlir::isa<mlir::UnknownLoc>(diag.getLocation()) ||
              !llvm::StringRef(message).split('\n').first.trim().empty())
            return mlir::failure();
          llvm::SmallVector<llvm::StringRef> lines;
          llvm::StringRef(message).split(lines, '\n', -1, /*KeepEmpty=*/false);
          if (!lines.empty())
            llvm::errs() << "fa-opt: " << llvm::join(lines, "; ") << "\n";
          return mlir::success();
        });
    return options.setupPassPipeline(pm);
  });
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
  // mlir-opt's own steps, with the input checked for what upstream's
  // parser crashes on (fa/Dialect/FA/Utils/ParseGuard.h) first.
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (std::string hazard = mlir::fa::describeUpstreamIntegerListHazard(
          inputFilename, file->getBuffer());
      !hazard.empty()) {
    llvm::errs() << "fa-opt: " << hazard << "\n";
    return 2;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}
