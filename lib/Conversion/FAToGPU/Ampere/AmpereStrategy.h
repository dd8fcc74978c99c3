//===- AmpereStrategy.h - the sm_80 strategy --------------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// FlashAttention-2 on sm_80: one thread block per (Q block, head, batch),
// `warps` warps of 16·m_tiles query rows each; K and V stream through a
// two-stage cp.async ring in XOR-swizzled shared memory; the MMAs are
// mma.sync m16n8k16 fed by ldmatrix. Files by concern: AmpereStrategy.cpp
// (what it supports, shared memory), AmpereSchedule.cpp (the kernel:
// prologue, the pipelined KV loop, the epilogue), CopyPipeline.cpp
// (cp.async, the swizzle), MmaPatterns.cpp (fa.qk_scores, fa.matmul and
// fa.load_operand on mma.sync).
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_AMPERE_AMPERESTRATEGY_H
#define FA_LIB_CONVERSION_FATOGPU_AMPERE_AMPERESTRATEGY_H

#include "fa/Conversion/FAToGPU/AttentionKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir {
namespace fa {
namespace ampere {

std::unique_ptr<AttentionGPUStrategy> createAmpereStrategy();

/// 16-byte chunks: the unit of cp.async.cg and of one ldmatrix row.
constexpr int64_t kChunkElements = 8;

/// Shared-memory row width of a tile `width` elements wide: a multiple of
/// 64 elements (eight chunks), what the XOR swizzle permutes within.
inline int64_t sharedRowElements(int64_t width) { return (width + 63) / 64 * 64; }

/// Column (in elements) of logical chunk `chunk` of `row` under the swizzle:
/// ldmatrix reads eight rows at one logical chunk; rows are a multiple of
/// 128 bytes apart, so unswizzled all eight would hit the same four banks.
Value swizzledColumn(OpBuilder &b, Location loc, Value row, Value chunk);

/// Where one operand's rows live in global memory.
struct GlobalTile {
  Value buffer;    ///< memref<?xT>
  Value base;      ///< element offset of (batch, head, row 0)
  Value rowStride; ///< elements between rows
  Value rowLimit;  ///< rows that exist (M or N)
};

/// Issues cp.async copies of rows [rowStart, rowStart + rows) of `src`,
/// `width` elements each, into the swizzled shared tile `dst` (behind
/// `stage` when non-null). Rows past the limit, and the columns from
/// `width` up to the next multiple of 16 (what the MMAs read of a padded
/// head dim), are zero-filled. With `interiorFastPath`, a uniform branch
/// on whether every row of the tile exists picks copies without the
/// per-chunk row check and clamp (for loops over many tiles).
void copyTileAsync(OpBuilder &b, Location loc, const GlobalTile &src,
                   Value rowStart, Value dst, Value stage, int64_t rows,
                   int64_t width, int64_t threads, Value threadId,
                   bool interiorFastPath = false);
/// Stores rows [rowStart, rowStart + rows) of `dst`, `width` elements each
/// (a multiple of 8), from the swizzled shared tile `src`: each thread a
/// 16-byte chunk a round (ld.shared.v4, st.global.v4), the rows that
/// exist. `src` must be readable (after a barrier).
void storeTileFromShared(OpBuilder &b, Location loc, Value src,
                         const GlobalTile &dst, Value rowStart, int64_t rows,
                         int64_t width, int64_t threads, Value threadId);
/// Commits the copies issued since the last commit as one group.
void commitGroup(OpBuilder &b, Location loc);
/// cp.async.wait_group: all but the newest `pending` groups have landed.
void waitUntilPending(OpBuilder &b, Location loc, int64_t pending);

void populateAmpereMmaPatterns(const TypeConverter &converter,
                               RewritePatternSet &patterns);

} // namespace ampere
} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_AMPERE_AMPERESTRATEGY_H
