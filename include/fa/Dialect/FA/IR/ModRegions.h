//===- ModRegions.h - the score_mod / mask_mod region contract --*- C++ -*-===//
//
// Part of fa-mlir.
//
// One home for what a variant region is: its arguments, the ops it may
// hold, what it yields and the captured values it may read. fa.attention,
// fa.attention_grad and the tile ops fa.score_mod / fa.mask_mod verify
// through here, and every lowering inlines a region through here.
//
//   score_mod: (score: f32, b, h, q_idx, kv_idx: index, captured...) -> f32
//   mask_mod:  (b, h, q_idx, kv_idx: index, captured...) -> i1
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_IR_MODREGIONS_H
#define FA_DIALECT_FA_IR_MODREGIONS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Region.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace fa {

enum class ModKind { Score, Mask };

/// "score_mod" or "mask_mod".
StringRef modName(ModKind kind);

/// Whether `type` may be captured: an f16, bf16, f32, integer or index
/// scalar, or a ranked tensor of those with no static dimension of size 0
/// (a dynamic one must be at least 1 at run time).
bool isCapturableType(Type type);

/// Checks the captured operands' types; emits on `op` and fails otherwise.
LogicalResult verifyCaptures(Operation *op, ValueRange captures);
LogicalResult verifyCaptureTypes(Operation *op, TypeRange types);

/// Checks `region` against the contract for `kind` with `captureTypes` as
/// its trailing arguments. An empty region is accepted when `optional`.
/// Emits one line on `op`, naming the region and any offending op.
LogicalResult verifyModRegion(Operation *op, Region &region, ModKind kind,
                              TypeRange captureTypes, bool optional);

/// Builds the read of `tensor[indices]` at the position a lowering chooses
/// (the CPU reads the tensor with indices clamped to its extent; a GPU
/// kernel loads from the buffer it was given).
using CaptureReadBuilder = function_ref<Value(
    OpBuilder &b, Location loc, Value tensor, ValueRange indices)>;

/// `indices`, each clamped to [0, extent(dim) - 1]: a region's computed
/// index never reads out of bounds, whatever holds the captured values.
SmallVector<Value> clampIndices(OpBuilder &b, Location loc, ValueRange indices,
                                function_ref<Value(unsigned dim)> extent);

/// Reads `tensor[indices]` with each index clamped to [0, size - 1]: a
/// region's computed index never reads out of bounds.
Value buildClampedExtract(OpBuilder &b, Location loc, Value tensor,
                          ValueRange indices);

/// Lowers one op of a region (its operands already mapped) where a target
/// cannot take it as is; null to clone it unchanged.
using ModOpLowering =
    function_ref<Value(OpBuilder &b, Operation &op, ValueRange operands)>;

/// Clones the body of a verified `region` at the builder's insertion point,
/// its arguments bound to `leading` then `captures` (the values the
/// lowering holds for the captured operands), and returns the value its
/// fa.yield yields. tensor.extract ops become `readCapture`'s reads;
/// `lowerOp`, if given, may replace any other op.
Value inlineModRegion(OpBuilder &b, Region &region, ValueRange leading,
                      ValueRange captures, CaptureReadBuilder readCapture,
                      ModOpLowering lowerOp = nullptr);

/// The types a tile op's region sees for its `captures`: each operand's
/// own, except that a GPU kernel's buffer (a memref of the captured
/// tensor's shape, with i64 elements for index ones) stands for the tensor
/// its region argument names. Emits on `op` and fails for anything else.
FailureOr<SmallVector<Type>> tileCaptureTypes(Operation *op, ValueRange captures,
                                              Region &region, ModKind kind);

} // namespace fa
} // namespace mlir

#endif // FA_DIALECT_FA_IR_MODREGIONS_H
