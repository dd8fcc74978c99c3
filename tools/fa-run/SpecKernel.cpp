//===- SpecKernel.cpp - fa-run --device cuda --spec: compile on the fly ---===//
//
// Part of fa-mlir.
//
// Only in builds with the compiler: turns a --spec into NAME.ptx +
// NAME.json in a fresh temporary directory, exactly as fa-compile would,
// so that the CUDA path can load it like a committed kernel; with --bwd,
// the backward kernel too, beside it.
//
//===----------------------------------------------------------------------===//

#include "FaRun.h"

#include "fa/Compiler/KernelCompiler.h"
#include "fa/Conversion/FAToGPU/AttentionKernel.h"
#include "fa/Dialect/FA/IR/FADialect.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include <cstdlib>

bool fa::compileSpecKernel(Options &o, std::string &error, bool &badInput) {
  std::string target =
      o.target.empty() ? mlir::fa::defaultChip().str() : o.target;
  badInput = true;
  AttentionSpec spec;
  std::vector<std::string> keys;
  // What the dtype rules out (--bwd of f8e4m3fn) is refused before any
  // compiling.
  if (!parseSpec(o.spec, spec, error, &keys) ||
      !checkCudaDtypeOptions(o, spec, error))
    return false;
  // block_m/block_n not given: the chip's tuned tile, as fa-compile uses.
  AttentionSpec forward = spec;
  mlir::fa::applyTunedTileUnlessGiven(forward, keys, target);
  std::unique_ptr<mlir::MLIRContext> context = mlir::fa::createCompilerContext();
  mlir::fa::CompiledKernel kernel;
  std::string name = mlir::fa::kernelName(forward, target);
  if (!mlir::fa::compileForwardKernel(*context, forward, target, name, kernel,
                                      error, badInput))
    return false;
  char directory[] = "/tmp/fa-run-XXXXXX";
  if (!mkdtemp(directory)) {
    error = "cannot create a temporary directory";
    badInput = false;
    return false;
  }
  if (!mlir::fa::writeKernel(kernel, directory, error)) {
    badInput = false;
    return false;
  }
  o.kernel = std::string(directory) + "/" + name + ".json";
  if (!o.backward || !o.bwdKernel.empty())
    return true;
  // The backward on the spec's tile where it names one, else on the chip's
  // tuned backward tile (the forward's is tuned for the forward), built
  // deterministic under --deterministic, as fa-compile --bwd builds it.
  AttentionSpec backwardSpec = spec;
  mlir::fa::applyTunedTileUnlessGiven(backwardSpec, keys, target,
                                      /*backward=*/true, o.deterministic);
  mlir::fa::CompiledKernel backward;
  std::string backwardName =
      mlir::fa::backwardKernelName(spec, target, o.deterministic);
  if (!mlir::fa::compileBackwardKernel(
          *context, backwardSpec, target, backwardName, backward, error, badInput,
          /*omitRowDot=*/o.negativeControl == "no-row-dot", o.deterministic))
    return false;
  if (!mlir::fa::writeKernel(backward, directory, error)) {
    badInput = false;
    return false;
  }
  o.bwdKernel = std::string(directory) + "/" + backwardName + ".json";
  return true;
}
