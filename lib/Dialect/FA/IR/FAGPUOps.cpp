//===- FAGPUOps.cpp - verifiers of the distributed-level ops --------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/IR/FAOps.h"

using namespace mlir;
using namespace mlir::fa;

template <typename Layout>
static Layout layoutOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast_or_null<Layout>(tensor.getEncoding()) : Layout();
}

/// The #fa.fragment layout of `type` if it holds plain values (neither
/// quad-partial rows nor a deferred scale), else null.
static FragmentLayoutAttr plainFragmentLayout(RankedTensorType type) {
  auto layout = layoutOf<FragmentLayoutAttr>(type);
  if (!layout || layout.getQuadPartial() || layout.getDeferredScale())
    return FragmentLayoutAttr();
  return layout;
}

/// The tile's rows are the layout's: "<what> has R rows, its layout L".
static LogicalResult checkFragmentRows(Operation *op, StringRef what,
                                       RankedTensorType tile,
                                       FragmentLayoutAttr layout) {
  if (tile.getDimSize(0) == layout.getRows())
    return success();
  return op->emitOpError(what) << " has " << tile.getDimSize(0)
                               << " rows, its layout " << layout.getRows();
}

/// Checks a TMA-layout tile against its buffer: [panels, rows, W] (behind
/// a stage index), W the panel width of the swizzle.
static LogicalResult verifyTmaTile(SharedTileOp op, TmaSharedLayoutAttr layout) {
  auto buffer = op.getBuffer().getType();
  auto tile = op.getTile().getType();
  int64_t rank = buffer.getRank();
  if (rank != (op.getStage() ? 4 : 3))
    return op.emitOpError("buffer must be [panels, rows, panel width]")
           << (op.getStage() ? " behind a stage index" : "");
  int64_t elementBytes = tile.getElementTypeBitWidth() / 8;
  int64_t panels = buffer.getDimSize(rank - 3);
  int64_t rows = buffer.getDimSize(rank - 2), width = buffer.getDimSize(rank - 1);
  if (elementBytes == 0 || width * elementBytes != layout.getSwizzleBytes())
    return op.emitOpError("panels must be ")
           << layout.getSwizzleBytes() << " bytes wide";
  if (tile.getRank() != 2)
    return op.emitOpError("tile ") << tile << " is not 2-D";
  // A key-major tile [R, C] is stored as its transpose: C rows of R.
  int64_t tileRows = tile.getDimSize(layout.getKeyMajor() ? 1 : 0);
  int64_t tileWidth = tile.getDimSize(layout.getKeyMajor() ? 0 : 1);
  if (tileRows != rows || tileWidth > panels * width)
    return op.emitOpError("tile ") << tile << " does not fit " << panels
                                   << " panels of " << rows << " rows";
  return success();
}

LogicalResult SharedTileOp::verify() {
  auto buffer = getBuffer().getType();
  auto tile = getTile().getType();
  if (tile.getElementType() != buffer.getElementType())
    return emitOpError("tile and buffer element types differ");
  if (auto tma = layoutOf<TmaSharedLayoutAttr>(tile))
    return verifyTmaTile(*this, tma);
  auto layout = layoutOf<SharedLayoutAttr>(tile);
  if (!layout)
    return emitOpError("result must carry a #fa.shared or #fa.tma_shared layout");
  int64_t rank = buffer.getRank();
  if (rank != (getStage() ? 3 : 2))
    return emitOpError("buffer must be [rows, width]")
           << (getStage() ? " behind a stage index ([stages, rows, width])" : "");
  int64_t rows = buffer.getDimSize(rank - 2), width = buffer.getDimSize(rank - 1);
  if (tile.getRank() != 2 || tile.getDimSize(0) != rows ||
      tile.getDimSize(1) > width || width != layout.getRowElements())
    return emitOpError("tile ") << tile << " does not fit buffer rows of "
                                << width << " elements";
  return success();
}

LogicalResult LoadOperandOp::verify() {
  if (!layoutOf<SharedLayoutAttr>(getTile().getType()))
    return emitOpError("operand must carry a #fa.shared layout");
  if (!layoutOf<OperandLayoutAttr>(getResult().getType()))
    return emitOpError("result must carry a #fa.operand layout");
  if (getTile().getType().getShape() != getResult().getType().getShape())
    return emitOpError("shapes differ");
  if (getTile().getType().getElementType() !=
      getResult().getType().getElementType())
    return emitOpError("element types differ");
  return success();
}

LogicalResult ConvertLayoutOp::verify() {
  auto from = layoutOf<FragmentLayoutAttr>(getInput().getType());
  auto to = layoutOf<FragmentLayoutAttr>(getResult().getType());
  if (!from || !to || getInput().getType().getRank() != 1)
    return emitOpError("converts 1-D #fa.fragment rows");
  if (!from.getQuadPartial() || to != from.withQuadPartial(false))
    return emitOpError("only quad-partial rows to full rows is defined");
  if (getInput().getType().getShape() != getResult().getType().getShape() ||
      getInput().getType().getElementType() !=
          getResult().getType().getElementType())
    return emitOpError("converts the layout only: shape and element type "
                       "must not change");
  return success();
}

LogicalResult StoreFragmentOp::verify() {
  auto tile = getTile().getType();
  auto layout = layoutOf<FragmentLayoutAttr>(tile);
  if (!layout || layout.getQuadPartial())
    return emitOpError("tile must carry a #fa.fragment layout (not quad-partial)");
  if (tile.getRank() != 1 && tile.getRank() != 2)
    return emitOpError("stores a 1-D (rows) or 2-D tile, got rank ")
           << tile.getRank();
  if (failed(checkFragmentRows(*this, "tile", tile, layout)))
    return failure();
  if (tile.getRank() == 2 && !getRowStride())
    return emitOpError("a 2-D tile needs a row stride");
  if (getBuffer().getType().getElementType() != tile.getElementType())
    return emitOpError("tile and buffer element types differ");
  return success();
}

LogicalResult LoadFragmentOp::verify() {
  auto tile = getResult().getType();
  auto layout = plainFragmentLayout(tile);
  if (!layout || (tile.getRank() != 1 && tile.getRank() != 2))
    return emitOpError("result must be a 1-D or 2-D tile with a plain "
                       "#fa.fragment layout");
  if (failed(checkFragmentRows(*this, "result", tile, layout)))
    return failure();
  if (tile.getRank() == 2 && !getRowStride())
    return emitOpError("a 2-D tile needs a row stride");
  if (getBuffer().getType().getElementType() != tile.getElementType())
    return emitOpError("tile and buffer element types differ");
  if (getMmaBlocks() && (tile.getRank() != 2 || !tile.getElementType().isF32()))
    return emitOpError("mma_blocks reads a 2-D f32 tile");
  if (getPredicated() && (tile.getRank() != 1 || !tile.getElementType().isF32()))
    return emitOpError("predicated reads a 1-D f32 tile");
  return success();
}

LogicalResult StoreSharedOp::verify() {
  auto tile = getTile().getType();
  if (!plainFragmentLayout(tile) || tile.getRank() != 2)
    return emitOpError("tile must be 2-D with a plain #fa.fragment layout");
  auto buffer = getBuffer().getType();
  if (buffer.getElementType() != tile.getElementType() ||
      (tile.getElementTypeBitWidth() != 16 && !tile.getElementType().isF32()))
    return emitOpError("stores a 16-bit or f32 tile into a buffer of its type");
  bool swizzled = tile.getElementTypeBitWidth() == 16;
  if (buffer.getRank() == 3) { // 128-byte swizzled panels
    int64_t width = swizzled ? 64 : 32;
    if (buffer.getDimSize(1) != tile.getDimSize(0) ||
        buffer.getDimSize(2) != width ||
        buffer.getDimSize(0) * width < tile.getDimSize(1))
      return emitOpError("a panel buffer must be [P, rows, ")
             << width << "] with " << width << "·P >= the tile's columns";
    return success();
  }
  if (buffer.getRank() != 2 || buffer.getDimSize(0) != tile.getDimSize(0) ||
      buffer.getDimSize(1) < tile.getDimSize(1) ||
      (swizzled && buffer.getDimSize(1) % 64))
    return emitOpError("buffer must be [rows, W], W >= the tile's columns")
           << (swizzled ? " and a multiple of 64 (#fa.shared rows)" : "");
  return success();
}

LogicalResult AccumulateFragmentOp::verify() {
  auto tile = getTile().getType();
  auto layout = plainFragmentLayout(tile);
  if (!layout || tile.getRank() != 2)
    return emitOpError("tile must be 2-D with a plain #fa.fragment layout");
  if (!tile.getElementType().isF32() ||
      !getBuffer().getType().getElementType().isF32())
    return emitOpError("adds an f32 tile into an f32 buffer");
  return checkFragmentRows(*this, "tile", tile, layout);
}

LogicalResult MmaWaitOp::verify() {
  if (getPending() < 0 || getPending() > 7)
    return emitOpError("pending must be in [0, 7], got ") << getPending();
  if (!layoutOf<FragmentLayoutAttr>(getInput().getType()))
    return emitOpError("operand must carry a #fa.fragment layout");
  Operation *def = getInput().getDefiningOp();
  if (!isa_and_nonnull<QKScoresOp, TileMatmulOp>(def) || !def->hasOneUse())
    return emitOpError("operand must be the only use of an fa.qk_scores or "
                       "fa.matmul result (the MMA it waits for)");
  return success();
}

LogicalResult WgmmaOp::verify() {
  Type input = getInputType();
  bool sixteenBit = input.isF16() || input.isBF16();
  if (!sixteenBit && !isa<Float8E4M3FNType>(input))
    return emitOpError("input type must be f16, bf16 or f8E4M3FN, got ") << input;
  int64_t n = getN();
  if (n < 8 || n > 256 || n % 8 != 0)
    return emitOpError("N (two per result) must be a multiple of 8 in [8, 256], got ")
           << n;
  if (!getAccumulators().empty() && getAccumulators().size() != getResults().size())
    return emitOpError("takes no accumulators or one per result");
  if (bool(getADescriptor()) == !getARegisters().empty())
    return emitOpError("A is either a descriptor or registers");
  if (!getADescriptor() && getARegisters().size() != 4)
    return emitOpError("A in registers is four i32 values");
  if (!getADescriptor() && (getAOffset() != 0 || getTransposeA()))
    return emitOpError("only a shared-memory A has an offset or transposes");
  for (int64_t offset : {getAOffset(), getBOffset()})
    if (offset < 0 || offset % 16 != 0)
      return emitOpError("descriptor offsets are non-negative multiples of 16 "
                         "bytes, got ")
             << offset;
  if (!sixteenBit && (getTransposeA() || getTransposeB()))
    return emitOpError("an e4m3 wgmma reads its operands K-major only");
  return success();
}

LogicalResult WgmmaWaitOp::verify() {
  if (getPending() > 7)
    return emitOpError("pending must be in [0, 7], got ") << getPending();
  if (getValues().empty())
    return emitOpError("carries at least one value (a bare wait is "
                       "nvvm.wgmma.wait.group.sync.aligned)");
  if (getValues().getTypes() != getResults().getTypes())
    return emitOpError("results must match the carried values");
  return success();
}
