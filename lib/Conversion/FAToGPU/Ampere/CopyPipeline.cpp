//===- CopyPipeline.cpp - cp.async tiles into swizzled shared memory ------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "AmpereStrategy.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
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
    Value id = arith::AddIOp::create(b, loc, threadId, cst(first));
    Value row = arith::DivUIOp::create(b, loc, id, cst(chunksPerRow));
    Value chunk = arith::RemUIOp::create(b, loc, id, cst(chunksPerRow));
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
    Value srcElements =
        arith::SelectOp::create(b, loc, exists, cst(kChunkElements), cst(0));
    Value column = swizzledColumn(b, loc, row, chunk);
    SmallVector<Value> indices = {row, column};
    if (stage)
      indices.insert(indices.begin(), stage);
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst, indices,
        src.buffer, ValueRange{offset}, b.getIndexAttr(kChunkElements),
        srcElements, /*bypassL1=*/b.getUnitAttr());
  }
}

// Groups and waits as NVVM ops: the copies sit in scf.if regions, so their
// tokens cannot reach an nvgpu.device_async_create_group (and an empty one
// does not re-parse in MLIR 22). PTX counts groups; it names none.
void ampere::commitGroup(OpBuilder &b, Location loc) {
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

void ampere::waitUntilPending(OpBuilder &b, Location loc, int64_t pending) {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(pending));
}
