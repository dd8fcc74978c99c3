//===- TileBuilder.h - building tiled attention IR --------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// The pieces fa-tile and fa-recompute-backward both write: static tiles
// loaded from (and stored to) [B, H, S, W] tensors with zero padding past the
// sequence end, splat constants, the KV range a mask leaves visible, and the
// ALiBi bias of a score tile.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_DIALECT_FA_TRANSFORMS_TILEBUILDER_H
#define FA_LIB_DIALECT_FA_TRANSFORMS_TILEBUILDER_H

#include "fa/Dialect/FA/IR/FAOps.h"
#include "fa/Dialect/FA/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace fa {

/// Static facts of one attention problem, read off its op.
struct AttentionShape {
  int64_t batch, queryHeads, kvHeads, queryLen, keyLen, headDim, valueDim;

  /// Reads the shape of a verified fa.attention / fa.attention_grad; fails
  /// (with a diagnostic) when a size is dynamic.
  static FailureOr<AttentionShape> get(Operation *op, Value query, Value key,
                                       Value value);
  int64_t groupSize() const { return queryHeads / kvHeads; }
};

/// Checks a pass's block-m / block-n options by the rule of #fa.tile: a
/// positive power of two, at most the longest sequence (2^40). Emits
/// "<pass>: block-m must be ..." on `op` and fails otherwise.
LogicalResult verifyBlockOptions(Operation *op, StringRef passName,
                                 int64_t blockM, int64_t blockN);


class TileBuilder {
public:
  TileBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  Value index(int64_t value);
  /// A splat f32 constant tensor of a static shape.
  Value splat(ArrayRef<int64_t> shape, double value);
  /// A zero f32 tile of a static shape, as `linalg.fill` (cheap to bufferize).
  Value zeros(ArrayRef<int64_t> shape);

  /// Rows of block [offset, offset + block) that exist in a sequence of
  /// `total` rows: min(block, total - offset).
  Value rowsInBlock(Value offset, int64_t block, int64_t total);

  /// Loads rows [offset, offset + block) of `source[batch, head]` (a
  /// [B, H, S, W] or [B, H, S] tensor) as a static [block, W] (or [block])
  /// tile. Rows past S are filled with `padValue`.
  Value loadTile(Value source, Value batch, Value head, Value offset,
                 int64_t block, double padValue = 0.0);

  /// Stores the rows of `tile` that exist (offset + i < S) into
  /// `dest[batch, head]` and returns the updated tensor.
  Value storeTile(Value tile, Value dest, Value batch, Value head,
                  Value offset, int64_t block);

  /// The KV rows [begin, end) that queries [q0, q0 + rows) of M can see
  /// under `mask`, with `begin` rounded down to a multiple of `blockN`.
  /// For no mask this is [0, N).
  std::pair<Value, Value> visibleKeyRange(MaskAttr mask, Value q0, Value rows,
                                          int64_t queryLen, int64_t keyLen,
                                          int64_t blockN);

  /// scf.for from 0 to `upper` by `step`, threading `carried`; `body` gets
  /// the induction variable and the carried values and returns their next
  /// values. Returns the loop's results.
  SmallVector<Value>
  forLoop(int64_t upper, int64_t step, ValueRange carried,
          function_ref<SmallVector<Value>(Value, ValueRange)> body);

  /// The ALiBi slope of `head` in `batch` from `slopes` ([Hq] or [B, Hq]),
  /// or a null value when there are no slopes.
  Value alibiSlope(Value slopes, Value batch, Value head);

  /// `scores` with the ALiBi bias of `slope` added (fa.alibi_bias, natural
  /// units), or `scores` itself when `slope` is null.
  Value addAlibiBias(Value scores, Value slope, Value q0, Value k0,
                     int64_t queryLen, int64_t keyLen);

  /// `scores` of the tile at [q0, k0] of (batch, query head) through the
  /// variant regions of an attention op: fa.score_mod with `scoreMod`'s
  /// body, then fa.mask_mod with `maskMod`'s, each only when its region is
  /// there.
  Value applyVariantRegions(Value scores, Region &scoreMod, Region &maskMod,
                            ValueRange captures, Value batch, Value head,
                            Value q0, Value k0, int64_t queryLen,
                            int64_t keyLen);

  /// The elementwise cast of an f32 tile to `elementType` (or a no-op).
  Value castTile(Value tile, Type elementType);

  OpBuilder &builder() { return b; }
  Location location() const { return loc; }

private:
  OpBuilder &b;
  Location loc;
};

} // namespace fa
} // namespace mlir

#endif // FA_LIB_DIALECT_FA_TRANSFORMS_TILEBUILDER_H
