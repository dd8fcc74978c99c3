//===- KernelCompiler.h - spec -> PTX + manifest ----------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// What fa-compile does, as a library: build `fa.attention` for a spec, run
// fa-to-ptx, and write NAME.ptx next to NAME.json, the manifest the runtime
// launches from.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_KERNELCOMPILER_H
#define FA_COMPILER_KERNELCOMPILER_H

#include "fa/Conversion/FAToGPU/Tuning.h"
#include "fa/runtime/Spec.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
namespace fa {

struct CompiledKernel {
  std::string name, ptx, manifest;
  double seconds = 0.0; ///< spec -> PTX
};

/// A context with everything the fa tools compile with: the fa dialect,
/// every upstream dialect and extension, and the LLVM IR translations
/// (gpu-module-to-binary and the ExecutionEngine need them).
std::unique_ptr<MLIRContext> createCompilerContext();

/// The conventional kernel name: fa_fwd_sm80_bf16_d128_causal.
std::string kernelName(const ::fa::AttentionSpec &spec,
                       const std::string &target);

/// Compiles one forward kernel. On failure returns false; `badInput` tells
/// a spec the target cannot do (exit 2) from a compiler failure.
/// `sharedMemoryBudgetKB`: the shared memory a block may take (0: the
/// chip's default; AttentionKernelConfig::sharedMemoryBudget), recorded in
/// the manifest as "shared_memory_budget" (bytes). `schedule` overrides
/// the chip's schedule knobs (Tuning.h; "stages" among them is the tile's
/// stages); the manifest's "schedule" lists the kernel's knobs.
bool compileForwardKernel(MLIRContext &context, const ::fa::AttentionSpec &spec,
                          const std::string &target, const std::string &name,
                          CompiledKernel &out, std::string &error,
                          bool &badInput, int64_t sharedMemoryBudgetKB = 0,
                          const ScheduleOverrides &schedule = {});

/// The conventional backward name: fa_bwd_sm80_bf16_d128_causal, with
/// `_det` for a kernel built deterministic.
std::string backwardKernelName(const ::fa::AttentionSpec &spec,
                               const std::string &target,
                               bool deterministic = false);

/// `name` for the negative control without D = rowsum(dO ∘ O)
/// (`omitRowDot`: NAME_no_row_dot), else `name`: a deliberately broken
/// kernel never takes the production kernel's name, so neither can be
/// mistaken for, or overwrite, the other. fa-run loads it by
/// --bwd-kernel.
std::string negativeControlKernelName(const std::string &name,
                                      bool omitRowDot);

/// Compiles the backward of `spec`: one PTX module with three entries
/// (NAME_preprocess, NAME_main, NAME_postprocess; KernelAbi.h's
/// BackwardStep) and a manifest of kind "backward" describing each.
/// `omitRowDot` builds the negative control (dS = P ∘ dP, no D term);
/// `deterministic` a kernel that adds dQ in a fixed order when launched
/// with "deterministic" (manifest "deterministic_mode": true). `schedule`
/// overrides the chip's backward schedule knobs.
bool compileBackwardKernel(MLIRContext &context,
                           const ::fa::AttentionSpec &spec,
                           const std::string &target, const std::string &name,
                           CompiledKernel &out, std::string &error,
                           bool &badInput, bool omitRowDot = false,
                           bool deterministic = false,
                           int64_t sharedMemoryBudgetKB = 0,
                           const ScheduleOverrides &schedule = {});

/// Compiles the module of a .mlir file holding one fa.attention in a
/// function (the kernel is named after the function).
bool compileForwardModule(MLIRContext &context, ModuleOp module,
                          const std::string &target, CompiledKernel &out,
                          std::string &error, bool &badInput);

/// The backward of that fa.attention: fa.attention_grad with its operands,
/// attributes, captures and regions, the chip's tuned backward tile,
/// named NAME_bwd (backwardKernelNameOf).
bool compileBackwardModule(MLIRContext &context, ModuleOp module,
                           const std::string &target, CompiledKernel &out,
                           std::string &error, bool &badInput);

/// Writes DIR/NAME.ptx and DIR/NAME.json.
bool writeKernel(const CompiledKernel &kernel, const std::string &directory,
                 std::string &error);

/// The tile fa-compile uses for `target` when none is given: the chip
/// strategy's tuned tile (the chip's Tuning.cpp). `target` must
/// be a registered chip.
void applyTunedTile(::fa::AttentionSpec &spec, const std::string &target);

/// The same for the backward: the strategy's tuned backward tile (of a
/// kernel built `deterministic`, or within a shared-memory budget other
/// than the chip's default, which may differ).
void applyTunedBackwardTile(::fa::AttentionSpec &spec, const std::string &target,
                            bool deterministic = false,
                            int64_t sharedMemoryBudgetKB = 0);
/// For a spec parsed from text (`keysGiven`: the keys it stated,
/// ::fa::parseSpec): the tuned tile of the forward (or `backward`, within
/// `sharedMemoryBudgetKB`, 0: the chip's default) where it gives no block_m
/// or block_n, as fa-compile's flags do.
void applyTunedTileUnlessGiven(::fa::AttentionSpec &spec,
                               const std::vector<std::string> &keysGiven,
                               const std::string &target, bool backward = false,
                               bool deterministic = false,
                               int64_t sharedMemoryBudgetKB = 0);

/// One kernel of the committed standard set.
struct StandardKernel {
  ::fa::AttentionSpec spec;
  std::string target;
  /// Also its backward (fa_bwd_...), with the strategy's backward tile.
  bool withBackward = false;
};

/// The committed standard set: sm_80 x {f16, bf16} x D {64, 128, 256} x
/// mask {none, causal}, plus window, Dv != D, D = 96, softcap and ALiBi
/// kernels; sm_90a x {f16, bf16} x D {64, 128, 256} x {none, causal},
/// and sm_90a f8e4m3fn x D {128, 256} x {none, causal} (forward only).
/// sm_80's D 64 and 128 kernels of the grid come with their backward.
/// Only `target`'s kernels when it is not empty.
std::vector<StandardKernel> standardSet(const std::string &target = "");

/// A hash of the generator's sources, fixed at configure time.
const char *generatorRevision();

} // namespace fa
} // namespace mlir

#endif // FA_COMPILER_KERNELCOMPILER_H
