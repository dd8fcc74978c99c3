//===- CopyPipeline.cpp - cp.async tiles into swizzled shared memory ------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "AmpereStrategy.h"

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

void ampere::copyTileAsync(OpBuilder &b, Location loc, const GlobalTile &src,
                           Value rowStart, Value dst, Value stage, int64_t rows,
                           int64_t width, int64_t threads, Value threadId) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  using Pred = arith::CmpIPredicate;
  // The MMAs read k in steps of 16: copy (or zero) whole 16-element pairs.
  int64_t chunksPerRow = (width + 15) / 16 * 2;
  int64_t realChunks = width / kChunkElements;
  int64_t chunks = rows * chunksPerRow;
  Value lastRow = arith::SubIOp::create(b, loc, src.rowLimit, cst(1));
  auto dstType = cast<MemRefType>(dst.getType());
  // Lane offsets are row · rowElements + column and stages whole tiles
  // apart: a dense row-major buffer, the whole ring (not a stage's slice).
  assert(dstType.getLayout().isIdentity() && !dst.getDefiningOp<memref::SubViewOp>() &&
         "cp.async tiles are dense row-major buffers, staged by `stage`");
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
  Value globalAddress = globalElementAddress(b, loc, src.buffer);
  // Where a round covers whole rows, a thread's chunks of every round share
  // its first round's (row, chunk), the rows a constant apart: the shared
  // address of each round is the first's plus an immediate. (LLVM hoists
  // every address it can see out of the loops that issue the copy: the
  // backward's Q-block loop held one 64-bit shared address per round.)
  bool wholeRows = threads % chunksPerRow == 0;
  Value firstRow = arith::DivUIOp::create(b, loc, threadId, cst(chunksPerRow));
  Value firstChunk = arith::RemUIOp::create(b, loc, threadId, cst(chunksPerRow));
  Value firstOffset;
  for (int64_t first = 0; first < chunks; first += threads) {
    // In a last, partial round the threads past the tile issue nothing.
    std::optional<OpBuilder::InsertionGuard> guard;
    if (first + threads > chunks) {
      Value inTile = arith::CmpIOp::create(
          b, loc, Pred::slt, threadId, cst(chunks - first));
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
    bool fromFirst = wholeRows && firstOffset && rowStep % 8 == 0;
    if (wholeRows) {
      row = arith::AddIOp::create(b, loc, firstRow, cst(rowStep));
    } else {
      Value id = arith::AddIOp::create(b, loc, threadId, cst(first));
      row = arith::DivUIOp::create(b, loc, id, cst(chunksPerRow));
      chunk = arith::RemUIOp::create(b, loc, id, cst(chunksPerRow));
    }
    Value globalRow = arith::AddIOp::create(b, loc, rowStart, row);
    Value exists = arith::CmpIOp::create(b, loc, Pred::slt, globalRow, src.rowLimit);
    if (realChunks < chunksPerRow)
      exists = arith::AndIOp::create(
          b, loc, exists,
          arith::CmpIOp::create(b, loc, Pred::slt, chunk, cst(realChunks)));
    // What does not exist is zero-filled (src-size 0) from an address
    // clamped into the buffer.
    Value readRow = arith::MinSIOp::create(b, loc, globalRow, lastRow);
    Value readChunk =
        realChunks < chunksPerRow
            ? arith::MinSIOp::create(b, loc, chunk, cst(realChunks - 1)).getResult()
            : chunk;
    Value offset = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, src.base,
                              arith::MulIOp::create(b, loc, readRow, src.rowStride)),
        arith::MulIOp::create(b, loc, readChunk, cst(kChunkElements)));
    Value source = arith::AddIOp::create(
        b, loc, globalAddress,
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                     arith::MulIOp::create(b, loc, offset, cst(bytes))));
    Value srcBytes = arith::SelectOp::create(
        b, loc, exists, arith::ConstantIntOp::create(b, loc, b.getI32Type(), 16),
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0));
    Value laneOffset = firstOffset;
    int64_t immediate = window.bytes + (fromFirst ? rowStep * rowElements * bytes : 0);
    if (!fromFirst) {
      Value column = swizzledColumn(b, loc, row, chunk);
      laneOffset = arith::IndexCastUIOp::create(
          b, loc, b.getI32Type(),
          arith::MulIOp::create(
              b, loc,
              arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, row, cst(rowElements)), column),
              cst(bytes)));
      if (first == 0 && !guard)
        firstOffset = laneOffset;
    }
    Value target = arith::AddIOp::create(b, loc, tileAddress, laneOffset);
    // .cg: the tile is read once per block from shared memory, L1 would
    // only hold it twice.
    inlinePtx(b, loc, Type(),
              ValueRange{target, source, srcBytes},
              "cp.async.cg.shared.global [$0+" + std::to_string(immediate) +
                  "], [$1], 16, $2;",
              "r,l,r");
  }
}

// Groups and waits as NVVM ops: the copies are inline PTX (no tokens), and
// PTX counts groups; it names none.
void ampere::commitGroup(OpBuilder &b, Location loc) {
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

void ampere::waitUntilPending(OpBuilder &b, Location loc, int64_t pending) {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(pending));
}
