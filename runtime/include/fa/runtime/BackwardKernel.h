//===- BackwardKernel.h - the backward's three kernels ----------*- C++ -*-===//
//
// Part of fa-mlir.
//
// A backward kernel is one PTX module with three entries, launched in
// order on one stream (KernelAbi.h's BackwardStep): preprocess (delta =
// rowsum(dO ∘ O)), main (dK, dV, and dQ into an f32 accumulator) and
// postprocess (dQ in the input dtype). Its manifest has "kind": "backward"
// and a "steps" object giving each entry's block, shared memory and
// parameters; the runtime computes the grids from the step.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_BACKWARDKERNEL_H
#define FA_RUNTIME_BACKWARDKERNEL_H

#include "fa/runtime/Kernel.h"

#include <array>
#include <memory>
#include <string>

namespace fa {

/// What fa-compile wrote in NAME.json for a backward kernel.
struct BackwardManifest : KernelInfo {
  /// "none", or the deliberately broken build this is ("no-row-dot": dS
  /// without the delta term), which must fail verification.
  std::string negativeControl = "none";
  /// The manifest's "deterministic_mode" (absent: false): whether the main
  /// kernel implements BackwardArgs::deterministic (dQ accumulated in a
  /// fixed order through the workspace's dq_semaphore counters).
  bool deterministicMode = false;
  /// A backward of score_mod / mask_mod regions: their captures (the main
  /// kernel's trailing parameters) and the regions ("variant", as the
  /// forward manifest states them; empty for a spec's kernel).
  Variant variant;

  /// One of the three kernels.
  struct Step {
    std::string entry; ///< the .entry in the PTX
    int64_t blockThreads = 128;
    int64_t dynamicSharedMemory = 0;
    ParamList params;
  };
  /// Indexed by abi::BackwardStep.
  std::array<Step, 3> steps;

  const Step &step(abi::BackwardStep s) const {
    return steps[static_cast<size_t>(s)];
  }

  /// Reads and checks a backward manifest (its numbers integers in range,
  /// its PTX file readable, exactly the three steps, every parameter one
  /// the ABI table binds, with the table's type); false with a one-line
  /// reason. A forward manifest is refused with a line that says so.
  static bool read(const std::string &path, BackwardManifest &out,
                   std::string &error);

  /// Whether the kernels take ALiBi slopes (the main step names them).
  bool takesAlibiSlopes() const;

  /// The grid of `s`: (ceil(M / kBackwardRowsPerBlock), Hq, B) for the
  /// preprocess and postprocess, (ceil(N / block_n), Hkv, B) for the main
  /// step.
  std::array<int64_t, 3> grid(abi::BackwardStep s,
                              const ProblemSize &size) const;

  /// Checks that every step's grid fits CUDA's limits (x <= 2^31 - 1,
  /// y and z <= 65535). False with a reason.
  bool checkLaunch(const ProblemSize &size, std::string &error) const;
};

/// A loaded backward kernel: its module and three functions.
class BackwardKernel {
public:
  /// Loads `manifestPath` and the PTX next to it; null with a reason.
  /// `noDevice` is set when there is no GPU at all.
  static std::unique_ptr<BackwardKernel>
  load(const std::string &manifestPath, std::string &error, bool &noDevice);
  ~BackwardKernel();

  /// Bytes of device memory backward() needs as BackwardArgs::workspace
  /// for these sizes (abi::BackwardWorkspace with the kernel's head_dim);
  /// -1 for sizes below 1 or past fa::limits' tensor bound.
  int64_t workspaceBytes(int64_t batch, int64_t queryHeads,
                         int64_t queryLen) const;

  /// Zeroes the workspace's dQ accumulator and semaphores
  /// (abi::BackwardWorkspace's zero range) and launches preprocess, main
  /// and postprocess, all on `stream` (null: the default stream), without
  /// waiting for them. False with a reason (bad sizes, a null pointer,
  /// args.deterministic on a kernel without that mode, a driver error);
  /// nothing aborts.
  bool backward(const BackwardArgs &args, cuda::CUstream stream,
                std::string &error) const;

  const BackwardManifest &manifest() const { return info; }
  int registers(abi::BackwardStep step) const {
    return numRegisters[static_cast<size_t>(step)];
  }
  cuda::Driver &driver() const { return *cu; }

private:
  BackwardKernel() = default;
  /// The checks backward() makes before it launches anything.
  bool checkArgs(const BackwardArgs &args, std::string &error) const;

  BackwardManifest info;
  cuda::Driver *cu = nullptr;
  cuda::CUmodule module = nullptr;
  std::array<cuda::CUfunction, 3> functions = {};
  std::array<int, 3> numRegisters = {};
};

} // namespace fa

#endif // FA_RUNTIME_BACKWARDKERNEL_H
