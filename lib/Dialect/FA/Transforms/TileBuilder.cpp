//===- TileBuilder.cpp - building tiled attention IR ----------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "TileBuilder.h"

#include "fa/Dialect/FA/Utils/MaskUtils.h"
#include "fa/runtime/Limits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fa;

FailureOr<AttentionShape> AttentionShape::get(Operation *op, Value query,
                                              Value key, Value value) {
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  auto v = cast<RankedTensorType>(value.getType());
  // Every tensor of the op, not Q, K and V alone: the tiles of O, dO and
  // LSE are cut at the sizes Q, K and V give. Captured tensors are read
  // whole, at any size.
  auto isStatic = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return !shaped || shaped.hasStaticShape();
  };
  ValueRange captures;
  if (auto fwd = dyn_cast<AttentionOp>(op))
    captures = fwd.getCaptures();
  else if (auto bwd = dyn_cast<AttentionGradOp>(op))
    captures = bwd.getCaptures();
  auto isStaticOperand = [&](OpOperand &operand) {
    return llvm::is_contained(captures, operand.get()) ||
           isStatic(operand.get().getType());
  };
  if (!llvm::all_of(op->getOpOperands(), isStaticOperand) ||
      !llvm::all_of(op->getResultTypes(), isStatic))
    return op->emitOpError(
        "needs static shapes to be tiled; specialise the problem size first");
  return AttentionShape{q.getDimSize(0), q.getDimSize(1), k.getDimSize(1),
                        q.getDimSize(2), k.getDimSize(2), q.getDimSize(3),
                        v.getDimSize(3)};
}

LogicalResult mlir::fa::verifyBlockOptions(Operation *op, StringRef passName,
                                           int64_t blockM, int64_t blockN) {
  for (auto [name, size] :
       {std::pair<StringRef, int64_t>{"block-m", blockM},
        std::pair<StringRef, int64_t>{"block-n", blockN}})
    if (!::fa::limits::blockSizeValid(size))
      return op->emitError() << passName << ": " << name << " must be "
                             << ::fa::limits::blockSizeRule()
                             << ", but is " << size;
  return success();
}

int64_t mlir::fa::clampBlockToSequence(int64_t block, int64_t total) {
  return std::min<int64_t>(block, llvm::PowerOf2Ceil(total));
}

Value TileBuilder::index(int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value TileBuilder::splat(ArrayRef<int64_t> shape, double value) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
}

Value TileBuilder::zeros(ArrayRef<int64_t> shape) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

Value TileBuilder::rowsInBlock(Value offset, int64_t block, int64_t total) {
  Value remaining = arith::SubIOp::create(b, loc, index(total), offset);
  return arith::MinSIOp::create(b, loc, index(block), remaining);
}

/// Offsets/sizes/strides that select rows [offset, offset + rows) of
/// `source[batch, head]`, keeping the trailing width if there is one.
static void sliceOfRows(OpBuilder &b, RankedTensorType sourceType, Value batch,
                        Value head, Value offset, OpFoldResult rows,
                        SmallVectorImpl<OpFoldResult> &offsets,
                        SmallVectorImpl<OpFoldResult> &sizes,
                        SmallVectorImpl<OpFoldResult> &strides) {
  offsets.assign({OpFoldResult(batch), OpFoldResult(head),
                  OpFoldResult(offset)});
  sizes.assign({OpFoldResult(b.getIndexAttr(1)),
                OpFoldResult(b.getIndexAttr(1)), rows});
  if (sourceType.getRank() == 4) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(sourceType.getDimSize(3)));
  }
  strides.assign(sourceType.getRank(), b.getIndexAttr(1));
}

Value TileBuilder::loadTile(Value source, Value batch, Value head,
                            Value offset, int64_t block, double padValue) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  int64_t total = sourceType.getDimSize(2);
  SmallVector<int64_t> tileShape = {block};
  if (sourceType.getRank() == 4)
    tileShape.push_back(sourceType.getDimSize(3));
  auto tileType =
      RankedTensorType::get(tileShape, sourceType.getElementType());

  SmallVector<OpFoldResult> offsets, sizes, strides;
  if (total % block == 0) { // Every block is full: a static slice.
    sliceOfRows(b, sourceType, batch, head, offset, b.getIndexAttr(block),
                offsets, sizes, strides);
    return tensor::ExtractSliceOp::create(b, loc, tileType, source, offsets,
                                          sizes, strides);
  }
  // The last block is partial: slice what exists, pad up to the block.
  Value rows = rowsInBlock(offset, block, total);
  sliceOfRows(b, sourceType, batch, head, offset, rows, offsets, sizes,
              strides);
  SmallVector<int64_t> partialShape = tileShape;
  partialShape[0] = ShapedType::kDynamic;
  auto partialType =
      RankedTensorType::get(partialShape, sourceType.getElementType());
  Value partial = tensor::ExtractSliceOp::create(b, loc, partialType, source,
                                                 offsets, sizes, strides);
  Value pad = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(sourceType.getElementType(), padValue));
  return tensor::createPadHighOp(tileType, partial, pad, /*nofold=*/false, loc,
                                 b);
}

Value TileBuilder::storeTile(Value tile, Value dest, Value batch, Value head,
                             Value offset, int64_t block) {
  auto destType = cast<RankedTensorType>(dest.getType());
  auto tileType = cast<RankedTensorType>(tile.getType());
  int64_t total = destType.getDimSize(2);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  if (total % block == 0) {
    sliceOfRows(b, destType, batch, head, offset, b.getIndexAttr(block),
                offsets, sizes, strides);
    return tensor::InsertSliceOp::create(b, loc, tile, dest, offsets, sizes,
                                         strides);
  }
  // Only the rows that exist are written back; padded rows are dropped.
  Value rows = rowsInBlock(offset, block, total);
  SmallVector<OpFoldResult> tileOffsets(tileType.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> tileSizes = {rows};
  if (tileType.getRank() == 2)
    tileSizes.push_back(b.getIndexAttr(tileType.getDimSize(1)));
  SmallVector<OpFoldResult> tileStrides(tileType.getRank(), b.getIndexAttr(1));
  SmallVector<int64_t> partialShape(tileType.getShape());
  partialShape[0] = ShapedType::kDynamic;
  auto partialType =
      RankedTensorType::get(partialShape, tileType.getElementType());
  Value partial = tensor::ExtractSliceOp::create(
      b, loc, partialType, tile, tileOffsets, tileSizes, tileStrides);
  sliceOfRows(b, destType, batch, head, offset, rows, offsets, sizes, strides);
  return tensor::InsertSliceOp::create(b, loc, partial, dest, offsets, sizes,
                                       strides);
}

std::pair<Value, Value>
TileBuilder::visibleKeyRange(MaskAttr mask, Value q0, Value rows,
                             int64_t queryLen, int64_t keyLen, int64_t blockN) {
  return buildVisibleKeyRange(b, loc, mask, q0, rows, index(queryLen),
                              index(keyLen), blockN);
}

SmallVector<Value> TileBuilder::forLoop(
    int64_t upper, int64_t step, ValueRange carried,
    function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto loop = scf::ForOp::create(
      b, loc, index(0), index(upper), index(step), carried,
      [&](OpBuilder &nested, Location, Value iv, ValueRange args) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nested.getInsertionBlock());
        scf::YieldOp::create(b, loc, body(iv, args));
      });
  return SmallVector<Value>(loop.getResults());
}

Value TileBuilder::alibiSlope(Value slopes, Value batch, Value head) {
  if (!slopes)
    return {};
  SmallVector<Value, 2> indices;
  if (cast<RankedTensorType>(slopes.getType()).getRank() == 2)
    indices.push_back(batch);
  indices.push_back(head);
  return tensor::ExtractOp::create(b, loc, slopes, indices);
}

Value TileBuilder::addAlibiBias(Value scores, Value slope, Value q0, Value k0,
                                int64_t queryLen, int64_t keyLen) {
  if (!slope)
    return scores;
  return AlibiBiasOp::create(b, loc, scores.getType(), scores, slope, q0, k0,
                             index(queryLen), index(keyLen),
                             /*log2_domain=*/nullptr);
}

/// An fa.score_mod / fa.mask_mod on `scores` whose body is a clone of
/// `region`.
template <typename ModOp>
static Value buildModTile(OpBuilder &b, Location loc, Region &region,
                          Value scores, Value q0, Value k0, Value queryLen,
                          Value keyLen, Value batch, Value head,
                          ValueRange captures) {
  auto mod = ModOp::create(b, loc, scores.getType(), scores, q0, k0, queryLen,
                           keyLen, batch, head, captures,
                           /*log2_domain=*/nullptr);
  IRMapping mapping;
  region.cloneInto(&mod.getBody(), mapping);
  return mod.getResult();
}

Value TileBuilder::applyVariantRegions(Value scores, Region &scoreMod,
                                       Region &maskMod, ValueRange captures,
                                       Value batch, Value head, Value q0,
                                       Value k0, int64_t queryLen,
                                       int64_t keyLen) {
  if (!scoreMod.empty())
    scores = buildModTile<ScoreModOp>(b, loc, scoreMod, scores, q0, k0,
                                      index(queryLen), index(keyLen), batch,
                                      head, captures);
  if (!maskMod.empty())
    scores = buildModTile<MaskModOp>(b, loc, maskMod, scores, q0, k0,
                                     index(queryLen), index(keyLen), batch,
                                     head, captures);
  return scores;
}

Value TileBuilder::castTile(Value tile, Type elementType) {
  auto type = cast<RankedTensorType>(tile.getType());
  if (type.getElementType() == elementType)
    return tile;
  return arith::TruncFOp::create(b, loc, type.clone(elementType), tile);
}
