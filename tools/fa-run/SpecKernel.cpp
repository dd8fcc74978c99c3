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

#include "fa/runtime/Cuda.h"

#include "fa/Compiler/KernelCompiler.h"
#include "fa/Conversion/FAToGPU/AttentionKernel.h"
#include "fa/Dialect/FA/IR/FADialect.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include <algorithm>
#include <cstdlib>

/// The KB a --spec is compiled within: --shared-memory-budget, else the
/// device's opt-in maximum (capped at the largest any chip allows), so that
/// an H100 gets the tiles it holds (sm_80's D256 backward on 64 x 64) and
/// a 99 KB GPU a refusal now rather than a kernel that cannot load. Without
/// a device (or where the driver cannot say), the chip's default: the run
/// then exits 77 before any launch, or loads the kernel, whose shared
/// memory the runtime checks against the device before it runs.
static int64_t specSharedMemoryBudgetKB(const fa::Options &o) {
  if (o.given.count("shared-memory-budget"))
    return o.sharedMemoryBudget;
  std::string error;
  bool noDevice = false;
  fa::cuda::Driver *d = fa::cuda::driver(error, noDevice);
  int64_t bytes = d ? fa::cuda::sharedMemoryPerBlock(*d, error) : -1;
  if (bytes < 0)
    return 0;
  return std::min(bytes, mlir::fa::kLargestSharedMemoryBudget) / 1024;
}

bool fa::compileSpecKernel(Options &o, std::string &error, bool &badInput) {
  std::string target =
      o.target.empty() ? mlir::fa::defaultChip().str() : o.target;
  badInput = true;
  // Its range is checked where the kernels are compiled.
  int64_t budgetKB = o.sharedMemoryBudget = specSharedMemoryBudgetKB(o);
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
                                      error, badInput, budgetKB))
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
                                      /*backward=*/true, o.deterministic,
                                      budgetKB);
  mlir::fa::CompiledKernel backward;
  bool omitRowDot = o.negativeControl == "no-row-dot";
  std::string backwardName = mlir::fa::negativeControlKernelName(
      mlir::fa::backwardKernelName(spec, target, o.deterministic), omitRowDot);
  if (!mlir::fa::compileBackwardKernel(*context, backwardSpec, target,
                                       backwardName, backward, error, badInput,
                                       omitRowDot, o.deterministic, budgetKB))
    return false;
  if (!mlir::fa::writeKernel(backward, directory, error)) {
    badInput = false;
    return false;
  }
  o.bwdKernel = std::string(directory) + "/" + backwardName + ".json";
  return true;
}
