//===- AmpereKernelBuilder.h - building the sm_80 attention kernel -*- C++ -*-===//
//
// Part of fa-mlir.
//
// FlashAttention-2 on sm_80, one thread block per (Q block, head, batch):
// `warps` warps, each owning 16 query rows of an m16n8k16 MMA tile. Q lives
// in registers as A fragments; K and V stream through a double-buffered,
// XOR-swizzled shared-memory pipeline filled by cp.async; S = QKᵀ and
// O += PV run on mma.sync; row max and row sum use xor shuffles among the
// four lanes that share a row.
//
// The pieces are split by op family: CopyPipeline.cpp (cp.async, swizzle),
// Mma.cpp (ldmatrix fragments, mma.sync), Softmax.cpp (masking, the online
// recurrence, reductions), AmpereStrategy.cpp (the kernel's skeleton).
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_AMPERE_AMPEREKERNELBUILDER_H
#define FA_LIB_CONVERSION_FATOGPU_AMPERE_AMPEREKERNELBUILDER_H

#include "fa/Conversion/FAToGPU/AttentionKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

#include <array>

namespace mlir {
namespace fa {
namespace ampere {

/// Four registers of an A fragment or an accumulator; two of a B fragment.
using AFragment = std::array<Value, 4>; // each vector<2xT>
using BFragment = std::array<Value, 2>; // each vector<2xT>
using CFragment = std::array<Value, 4>; // each f32

/// Where one [rows × width] operand tile lives in global memory.
struct GlobalTile {
  Value buffer;     ///< memref<?xT>
  Value base;       ///< element offset of (batch, head, row 0)
  Value rowStride;  ///< elements between rows
  Value rowLimit;   ///< rows that exist (M or N)
};

class AmpereKernelBuilder {
public:
  AmpereKernelBuilder(OpBuilder &b, Location loc,
                      const AttentionKernelConfig &config)
      : b(b), loc(loc), c(config) {}

  // Scalars.
  Value index(int64_t v);
  Value i32(int64_t v);
  Value f32(double v);
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value div(Value x, Value y); ///< unsigned
  Value rem(Value x, Value y); ///< unsigned
  Value minIndex(Value x, Value y);
  Value maxIndex(Value x, Value y);
  Value select(Value cond, Value x, Value y);
  Value cmp(arith::CmpIPredicate pred, Value x, Value y);
  Value cmpf(arith::CmpFPredicate pred, Value x, Value y);

  // Copy pipeline (CopyPipeline.cpp).
  /// Issues cp.async copies of rows [rowStart, rowStart + rows) of `src`
  /// into the swizzled shared tile `dst` ([rows × width]); rows at or past
  /// the limit are zero-filled. Returns the async tokens.
  /// `stage` (may be null) selects the buffer of a [stages × rows × width]
  /// pipeline tile.
  SmallVector<Value> copyTileAsync(const GlobalTile &src, Value rowStart,
                                   Value dst, Value stage, int64_t rows,
                                   int64_t width, Value threadId);
  /// Column (in elements) of logical 16-byte chunk `chunk` of row `row`
  /// after the XOR swizzle that makes ldmatrix conflict-free (rows hold at
  /// least 8 chunks: D, Dv are multiples of 64).
  Value swizzledColumn(Value row, Value chunk);
  Value commitGroup(ArrayRef<Value> tokens);
  /// cp.async.wait_group `pending`: all but the newest `pending` groups
  /// done (`group` is the newest group's token; PTX counts, it names none).
  void waitUntilPending(Value group, int64_t pending);
  /// x·scale - shift as one FFMA (contracted multiply-subtract).
  Value scaledMinus(Value x, Value scale, Value shift);

  // MMA (Mma.cpp).
  /// A fragment (16 rows × 16 k) of the row-major shared tile at
  /// (row0, k chunk kc).
  AFragment loadA(Value tile, Value row0, int64_t kc, Value lane);
  /// The shared-memory indices of (row, column) in `tile`, behind `stage`.
  SmallVector<Value> tileIndices(Value stage, Value row, Value column);
  /// B fragments of two n8 tiles (n0..n0+15) × k16 chunk kc, from a tile
  /// stored [n][k] (K for S = QKᵀ).
  std::array<BFragment, 2> loadBFromRows(Value tile, Value stage, int64_t n0,
                                         int64_t kc, Value lane);
  /// B fragments of two n8 tiles (n0..n0+15) × k16 chunk kc, from a tile
  /// stored [k][n] (V for O = PV), via ldmatrix.trans.
  std::array<BFragment, 2> loadBFromColumns(Value tile, Value stage,
                                            int64_t n0, int64_t kc, Value lane);
  /// d = a·b + acc on mma.sync.m16n8k16 with f32 accumulation.
  CFragment mma(const AFragment &a, const BFragment &bf, const CFragment &acc);
  /// Packs f32 pairs into a vector<2xT> register.
  Value pack(Value lo, Value hi);

  // Softmax (Softmax.cpp).
  /// Max / sum over the four lanes that share a row (xor 1, 2).
  Value rowAllReduceMax(Value v);
  Value rowAllReduceSum(Value v);
  /// `s` where key `col` is visible to query `row`, else -inf.
  Value maskScore(Value s, Value row, Value col, Value queryLen,
                  Value keyLen);
  /// ex2.approx.f32 through its NVVM intrinsic (math.exp2 would become a
  /// libdevice call, which only links where CUDA_HOME points at a toolkit).
  Value exp2(Value x);
  /// exp2(x - m), 0 when the row has seen no key (m = -inf).
  Value exp2Shifted(Value x, Value safeMax);
  /// m itself, or 0 when m = -inf (so that x - m never is -inf - -inf).
  Value safeMax(Value m);
  /// ln(x) for the LSE, through lg2.approx.
  Value naturalLog(Value x);

  /// The first and one-past-last visible key for query rows
  /// [q0, q0 + rows) of M, N under the mask; begin rounded to blockN.
  std::pair<Value, Value> visibleKeyRange(Value q0, Value rows, Value queryLen,
                                          Value keyLen);

  OpBuilder &b;
  Location loc;
  const AttentionKernelConfig &c;
};

} // namespace ampere
} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_AMPERE_AMPEREKERNELBUILDER_H
