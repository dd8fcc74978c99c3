//===- consumer-opt.cpp - an out-of-tree mlir-opt with fa-mlir ------------===//
//
// Part of fa-mlir's examples: what a compiler that links the installed
// package (find_package(FaMLIR)) writes to run fa-mlir's dialect, passes and
// pipelines next to upstream's in its own tool.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/Passes.h"
#include "fa/Dialect/FA/IR/FADialect.h"
#include "fa/Dialect/FA/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  // Upstream's passes, then fa-mlir's: fa-tile, fa-fuse-online-softmax,
  // fa-recompute-backward, ... and the fa-compile-cpu / fa-to-ptx pipelines.
  mlir::registerAllPasses();
  mlir::fa::registerFAPasses();
  mlir::fa::registerFAConversionPassesAndPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::fa::FADialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "consumer-opt: upstream MLIR with fa-mlir\n", registry));
}
