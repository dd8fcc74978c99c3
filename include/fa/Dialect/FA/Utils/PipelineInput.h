//===- PipelineInput.h - what a lowering takes, checked first ---*- C++ -*-===//
//
// Part of fa-mlir.
//
// The end-to-end pipelines (fa-to-ptx, convert-fa-to-gpu, fa-to-cpu,
// fa-compile-cpu) and the passes that start a lowering (fa-gpu-distribute)
// check their input here before anything runs, so that input a pipeline
// does not take gets one line saying what to run instead of an internal
// error deep in a conversion:
//
//   * IR of the wrong level: fa.attention / fa.attention_grad where tiled
//     IR is expected ("run fa-tile and fa-fuse-online-softmax first"), or
//     tiles with a GPU layout (fa-gpu-distribute's output), which only
//     fa-gpu-lower-fragments lowers;
//   * a function name the target cannot spell as a kernel's, where LLVM
//     would abort the process ("Symbol name with unsupported characters").
//     fa-compile and the C API check their kernel names with the same rule;
//   * on the CPU path, a symbol named after a C library function its code
//     calls (malloc, free, expf, ...): the lowering would rename its own
//     calls around it, or the linker bind them to it.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_UTILS_PIPELINEINPUT_H
#define FA_DIALECT_FA_UTILS_PIPELINEINPUT_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
namespace fa {

/// Why `name` cannot name a kernel, as the end of a sentence that starts
/// with what the name is ("'a-b' is not a PTX identifier (...)"), or "" if
/// it can. A kernel takes its function's name, and each of a backward's
/// three entries appends its step's suffix (`_postprocess` the longest), so
/// a `backward` name leaves room for it. The name is quoted printable
/// (control bytes as \xNN).
std::string unsupportedKernelName(StringRef name, bool backward = false);

/// Why `name` cannot name a symbol in IR the CPU path lowers, as the end
/// of a sentence like unsupportedKernelName's, or "" if it can: the C
/// library functions the lowered code calls (the allocations the lowering
/// declares, the math and memory functions LLVM calls for its intrinsics)
/// are reached by their plain names in the same symbol space.
std::string unsupportedHostSymbolName(StringRef name);

/// True if `type` is a tensor with one of the GPU layouts fa-gpu-distribute
/// puts on tiles (#fa.fragment, #fa.operand, #fa.shared, #fa.tma_shared).
bool hasGPULayout(Type type);

/// The first op under `root` (itself included) that takes, makes or binds
/// (as a block argument) a tile with a GPU layout, or null.
Operation *findGPULayout(Operation *root);

/// What a pipeline (or a pass that starts a lowering) takes.
struct PipelineInput {
  /// The pipeline's name, first in each message ("fa-to-ptx").
  StringRef name;
  /// fa.attention and fa.attention_grad (L1): the pipeline tiles them
  /// itself. Otherwise it takes tiled IR (L2) only.
  bool takesAttention = false;
  /// The GPU lowering: each function holding fa ops becomes a kernel named
  /// after it, and each symbol already in a gpu.module is compiled to PTX
  /// under its name. (The CPU path keeps the rule for the functions holding
  /// fa ops, so that IR one path takes the other takes too, and a
  /// function's C interface, _mlir_ciface_NAME, is a C identifier; it also
  /// refuses every symbol unsupportedHostSymbolName refuses.)
  bool gpu = true;
};

/// Checks what `root` holds against what `input` takes: one error on the
/// first offender, and failure.
LogicalResult checkPipelineInput(Operation *root, const PipelineInput &input);

} // namespace fa
} // namespace mlir

#endif // FA_DIALECT_FA_UTILS_PIPELINEINPUT_H
