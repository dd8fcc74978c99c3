//===- CopyPipeline.cpp - cp.async tiles into swizzled shared memory ------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "AmpereKernelBuilder.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::ampere;

/// 16-byte chunks: the unit of cp.async.cg and of one ldmatrix row.
static constexpr int64_t kChunkElements = 8;

Value AmpereKernelBuilder::swizzledColumn(Value row, Value chunk) {
  // ldmatrix reads 8 rows at one logical chunk. Rows are a multiple of
  // 128 bytes apart, so without a swizzle all 8 hit the same 4 banks. XOR
  // the chunk with row % 8 to spread them over all 32 banks; the cp.async
  // writes use the same map.
  Value phase = arith::AndIOp::create(b, loc, row, index(7));
  Value physical = arith::XOrIOp::create(b, loc, chunk, phase);
  return mul(physical, index(kChunkElements));
}

SmallVector<Value> AmpereKernelBuilder::copyTileAsync(const GlobalTile &src,
                                                      Value rowStart,
                                                      Value dst, Value stage,
                                                      int64_t rows,
                                                      int64_t width,
                                                      Value threadId) {
  int64_t chunksPerRow = width / kChunkElements;
  int64_t threads = c.warps * 32;
  int64_t chunks = rows * chunksPerRow;
  SmallVector<Value> tokens;
  Value lastRow = sub(src.rowLimit, index(1));
  for (int64_t first = 0; first < chunks; first += threads) {
    // Chunk id -> (row, logical chunk); consecutive threads take
    // consecutive 16-byte chunks of a row: coalesced global reads.
    Value id = add(threadId, index(first));
    Value row = div(id, index(chunksPerRow));
    Value chunk = rem(id, index(chunksPerRow));
    Value globalRow = add(rowStart, row);
    Value exists = cmp(arith::CmpIPredicate::slt, globalRow, src.rowLimit);
    // A row past the end is zero-filled (src-size 0); its address is
    // clamped to the last row so it stays inside the buffer.
    Value readRow = minIndex(globalRow, lastRow);
    Value offset = add(add(src.base, mul(readRow, src.rowStride)),
                       mul(chunk, index(kChunkElements)));
    Value srcElements = select(exists, index(kChunkElements), index(0));
    Value column = swizzledColumn(row, chunk);
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst,
        tileIndices(stage, row, column), src.buffer, ValueRange{offset},
        b.getIndexAttr(kChunkElements), srcElements,
        /*bypassL1=*/b.getUnitAttr()));
  }
  return tokens;
}

SmallVector<Value> AmpereKernelBuilder::tileIndices(Value stage, Value row,
                                                    Value column) {
  if (stage)
    return {stage, row, column};
  return {row, column};
}

Value AmpereKernelBuilder::commitGroup(ArrayRef<Value> tokens) {
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

void AmpereKernelBuilder::waitUntilPending(Value group, int64_t pending) {
  nvgpu::DeviceAsyncWaitOp::create(b, loc, group,
                                   b.getI32IntegerAttr(pending));
}

Value AmpereKernelBuilder::scaledMinus(Value x, Value scale, Value shift) {
  auto contract = arith::FastMathFlags::contract;
  Value product = arith::MulFOp::create(b, loc, x, scale, contract);
  return arith::SubFOp::create(b, loc, product, shift, contract);
}
