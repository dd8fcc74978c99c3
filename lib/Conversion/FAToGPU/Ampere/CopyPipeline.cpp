//===- CopyPipeline.cpp - cp.async tiles into swizzled shared memory ------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "AmpereStrategy.h"

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::ampere;

Value ampere::swizzledColumn(OpBuilder &b, Location loc, Value row, Value chunk) {
  static_assert(kChunkElements == 8, "#fa.shared's chunks are 16 bytes");
  return sharedSwizzledColumn(b, loc, row, chunk);
}

namespace {

/// The 32-bit byte offset of 16-byte chunk `chunk` of row `row` in a
/// swizzled [.][rowElements] shared tile.
Value swizzledChunkOffset(OpBuilder &b, Location loc, Value row, Value chunk,
                          int64_t rowElements, int64_t bytes) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value column = swizzledColumn(b, loc, row, chunk);
  return arith::IndexCastUIOp::create(
      b, loc, b.getI32Type(),
      arith::MulIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, row, cst(rowElements)),
                                column),
          cst(bytes)));
}

/// The 64-bit address of chunk `chunk` of row `row` of `tile`, whose
/// buffer starts at `globalAddress`.
Value globalChunkAddress(OpBuilder &b, Location loc, const GlobalTile &tile,
                         Value globalAddress, Value row, Value chunk, int64_t bytes) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value offset = arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, tile.base,
                            arith::MulIOp::create(b, loc, row, tile.rowStride)),
      arith::MulIOp::create(b, loc, chunk, cst(kChunkElements)));
  return arith::AddIOp::create(
      b, loc, globalAddress,
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                   arith::MulIOp::create(b, loc, offset, cst(bytes))));
}

/// One tile's cp.async copies, round by round: `threads` threads each
/// issue one 16-byte chunk a round.
struct TileCopy {
  const GlobalTile &src;
  Value rowStart, tileAddress, globalAddress, threadId;
  Value firstRow, firstChunk, lastRow;
  int64_t rows, chunksPerRow, realChunks, threads, bytes, rowElements,
      windowBytes;

  Value cst(OpBuilder &b, Location loc, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  bool wholeRows() const { return threads % chunksPerRow == 0; }

  /// The rounds. `checked`: rows past src.rowLimit and the padded columns
  /// are zero-filled (src-size 0) from an address clamped into the buffer.
  /// Unchecked (every row of the tile exists, no padded column), each
  /// round's source is the first round's plus rowStep · rowStride: no
  /// compare, clamp or select, and the address stays affine in rowStart
  /// (LLVM strength-reduces it across a loop of tiles).
  void emit(OpBuilder &b, Location loc, bool checked) const;
};

void TileCopy::emit(OpBuilder &b, Location loc, bool checked) const {
  using Pred = arith::CmpIPredicate;
  int64_t chunks = rows * chunksPerRow;
  // Where a round covers whole rows, a thread's chunks of every round share
  // its first round's (row, chunk), the rows a constant apart: the shared
  // address of each round is the first's plus an immediate. (LLVM hoists
  // every address it can see out of the loops that issue the copy: the
  // backward's Q-block loop held one 64-bit shared address per round.)
  Value firstOffset, previousSource, roundBytes;
  if (!checked && wholeRows())
    roundBytes = arith::IndexCastUIOp::create(
        b, loc, b.getI64Type(),
        arith::MulIOp::create(b, loc, src.rowStride,
                              cst(b, loc, threads / chunksPerRow * bytes)));
  for (int64_t first = 0; first < chunks; first += threads) {
    // In a last, partial round the threads past the tile issue nothing.
    std::optional<OpBuilder::InsertionGuard> guard;
    if (first + threads > chunks) {
      Value inTile = arith::CmpIOp::create(b, loc, Pred::slt, threadId,
                                           cst(b, loc, chunks - first));
      auto ifOp = scf::IfOp::create(b, loc, inTile);
      guard.emplace(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    // Chunk id -> (row, logical chunk); consecutive threads take
    // consecutive 16-byte chunks of a row: coalesced global reads.
    Value row = firstRow, chunk = firstChunk;
    // The swizzle's phase is row % 8: the first round's where the rounds
    // are whole multiples of 8 rows apart.
    int64_t rowStep = first / chunksPerRow;
    bool fromFirst = wholeRows() && firstOffset && rowStep % 8 == 0;
    if (wholeRows()) {
      row = arith::AddIOp::create(b, loc, firstRow, cst(b, loc, rowStep));
    } else {
      Value id = arith::AddIOp::create(b, loc, threadId, cst(b, loc, first));
      row = arith::DivUIOp::create(b, loc, id, cst(b, loc, chunksPerRow));
      chunk = arith::RemUIOp::create(b, loc, id, cst(b, loc, chunksPerRow));
    }
    Value globalRow = arith::AddIOp::create(b, loc, rowStart, row);
    Value readRow = globalRow, readChunk = chunk, exists;
    if (checked) {
      exists = arith::CmpIOp::create(b, loc, Pred::slt, globalRow, src.rowLimit);
      if (realChunks < chunksPerRow)
        exists = arith::AndIOp::create(
            b, loc, exists,
            arith::CmpIOp::create(b, loc, Pred::slt, chunk, cst(b, loc, realChunks)));
      readRow = arith::MinSIOp::create(b, loc, globalRow, lastRow);
      if (realChunks < chunksPerRow)
        readChunk = arith::MinSIOp::create(b, loc, chunk, cst(b, loc, realChunks - 1));
    }
    Value source;
    if (!checked && wholeRows() && previousSource) {
      // The rounds are `threads / chunksPerRow` rows apart: one add from
      // the last round's source (one loop invariant, not one per round).
      source = arith::AddIOp::create(b, loc, previousSource, roundBytes);
    } else {
      source = globalChunkAddress(b, loc, src, globalAddress, readRow, readChunk, bytes);
    }
    previousSource = source;
    Value srcBytes;
    if (checked)
      srcBytes = arith::SelectOp::create(
          b, loc, exists, arith::ConstantIntOp::create(b, loc, b.getI32Type(), 16),
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0));
    Value laneOffset = firstOffset;
    int64_t immediate = windowBytes + (fromFirst ? rowStep * rowElements * bytes : 0);
    if (!fromFirst) {
      laneOffset = swizzledChunkOffset(b, loc, row, chunk, rowElements, bytes);
      if (first == 0 && !guard)
        firstOffset = laneOffset;
    }
    Value target = arith::AddIOp::create(b, loc, tileAddress, laneOffset);
    // .cg: the tile is read once per block from shared memory, L1 would
    // only hold it twice. A checked copy reads srcBytes (16 or 0) and
    // zero-fills the rest.
    NVVM::CpAsyncOp::create(b, loc, sharedPointer(b, loc, target, immediate),
                            globalPointer(b, loc, source), /*size=*/16,
                            NVVM::LoadCacheModifierKind::CG, srcBytes);
  }
}

} // namespace

void ampere::copyTileAsync(OpBuilder &b, Location loc, const GlobalTile &src,
                           Value rowStart, Value dst, Value stage, int64_t rows,
                           int64_t width, int64_t threads, Value threadId,
                           bool interiorFastPath) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value lastRow = arith::SubIOp::create(b, loc, src.rowLimit, cst(1));
  auto dstType = cast<MemRefType>(dst.getType());
  // Lane offsets are row · rowElements + column and stages whole tiles
  // apart: a dense row-major buffer, the whole ring (not a stage's slice).
  assert(dstType.getLayout().isIdentity() && !dst.getDefiningOp<memref::SubViewOp>() &&
         "cp.async tiles are dense row-major buffers, staged by `stage`");
  // The MMAs read k in steps of 16: copy (or zero) whole 16-element pairs.
  int64_t chunksPerRow = (width + 15) / 16 * 2;
  int64_t bytes = dstType.getElementTypeBitWidth() / 8;
  int64_t rowElements = dstType.getShape().back();
  // The tile's (the stage's) 32-bit shared-window address, and the global
  // buffer's 64-bit generic one.
  SharedWindowAddress window = splitSharedWindowAddress(b, loc, dst);
  Value tileAddress = window.base;
  if (stage) {
    int64_t stageBytes = dstType.getDimSize(1) * rowElements * bytes;
    tileAddress = arith::AddIOp::create(
        b, loc, tileAddress,
        arith::IndexCastUIOp::create(
            b, loc, b.getI32Type(),
            arith::MulIOp::create(b, loc, stage, cst(stageBytes))));
  }
  TileCopy copy{src,
                rowStart,
                tileAddress,
                globalElementAddress(b, loc, src.buffer),
                threadId,
                arith::DivUIOp::create(b, loc, threadId, cst(chunksPerRow)),
                arith::RemUIOp::create(b, loc, threadId, cst(chunksPerRow)),
                lastRow,
                rows,
                chunksPerRow,
                width / kChunkElements,
                threads,
                bytes,
                rowElements,
                window.bytes};
  if (!interiorFastPath || copy.realChunks < chunksPerRow) {
    copy.emit(b, loc, /*checked=*/true);
    return;
  }
  // A uniform branch: every tile but a ragged last one takes the
  // unchecked copies.
  Value whole = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sle,
      arith::AddIOp::create(b, loc, rowStart, cst(rows)), src.rowLimit);
  auto ifOp = scf::IfOp::create(b, loc, whole, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  copy.emit(b, loc, /*checked=*/false);
  b.setInsertionPointToStart(ifOp.elseBlock());
  copy.emit(b, loc, /*checked=*/true);
}

void ampere::storeTileFromShared(OpBuilder &b, Location loc, Value src,
                                 const GlobalTile &dst, Value rowStart,
                                 int64_t rows, int64_t width, int64_t threads,
                                 Value threadId) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto srcType = cast<MemRefType>(src.getType());
  int64_t bytes = srcType.getElementTypeBitWidth() / 8;
  int64_t rowElements = srcType.getShape().back();
  assert(srcType.getRank() == 2 && width % kChunkElements == 0 &&
         width <= rowElements &&
         "a dense [rows][rowElements] tile of whole 16-byte chunks");
  int64_t chunksPerRow = width / kChunkElements;
  int64_t chunks = rows * chunksPerRow;
  SharedWindowAddress window = splitSharedWindowAddress(b, loc, src);
  Value globalAddress = globalElementAddress(b, loc, dst.buffer);
  for (int64_t first = 0; first < chunks; first += threads) {
    Value id = arith::AddIOp::create(b, loc, threadId, cst(first));
    Value row = arith::DivUIOp::create(b, loc, id, cst(chunksPerRow));
    Value chunk = arith::RemUIOp::create(b, loc, id, cst(chunksPerRow));
    Value globalRow = arith::AddIOp::create(b, loc, rowStart, row);
    Value stored = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         globalRow, dst.rowLimit);
    if (first + threads > chunks)
      stored = arith::AndIOp::create(
          b, loc, stored,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, id, cst(chunks)));
    auto ifOp = scf::IfOp::create(b, loc, stored);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value sharedAddress = arith::AddIOp::create(
        b, loc, window.base,
        swizzledChunkOffset(b, loc, row, chunk, rowElements, bytes));
    Value target =
        globalChunkAddress(b, loc, dst, globalAddress, globalRow, chunk, bytes);
    // One 16-byte chunk: ld.shared.v4.b32, then st.global.v4.b32.
    auto chunkType = VectorType::get({4}, b.getI32Type());
    Value chunkValue = LLVM::LoadOp::create(
        b, loc, chunkType, sharedPointer(b, loc, sharedAddress, window.bytes),
        /*alignment=*/16);
    LLVM::StoreOp::create(b, loc, chunkValue, globalPointer(b, loc, target),
                          /*alignment=*/16);
  }
}

// Groups and waits as NVVM ops: PTX counts groups; it names none.
void ampere::commitGroup(OpBuilder &b, Location loc) {
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

void ampere::waitUntilPending(OpBuilder &b, Location loc, int64_t pending) {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(pending));
}
