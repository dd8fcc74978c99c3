//===- HopperPtx.h - the sm_90a instructions of the Hopper schedule -*- C++ -*-===//
//
// Part of fa-mlir.
//
// The Hopper instructions the sm_90a schedule and its wgmma patterns use,
// each built in one place: NVVM ops where MLIR 22's NVVM dialect has a form
// that lowers to the instruction the schedule needs, else fa instruction
// ops (fa.wgmma, fa.wgmma_wait) that convert-fa-gpu-to-llvm turns into PTX
// late. docs/toolchain.md says which NVVM op falls short and why (the nvgpu
// ops too: nvgpu.warpgroup.mma bundles fence, commit and wait, and a tensor
// map cannot be a by-value kernel parameter). Shared-memory operands are
// 32-bit shared-window addresses (i32), as PTX's `.shared::cta` forms take
// them; the NVVM ops get them as pointers.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_HOPPER_HOPPERPTX_H
#define FA_LIB_CONVERSION_FATOGPU_HOPPER_HOPPERPTX_H

#include "mlir/IR/Builders.h"

namespace mlir {
namespace fa {
namespace hopper {

/// mbarrier.init with `count` expected arrivals.
void mbarrierInit(OpBuilder &b, Location loc, Value barrier, int64_t count);
/// Makes the initialised barriers visible to the async proxy (TMA) before
/// the block barrier that follows.
void fenceBarrierInit(OpBuilder &b, Location loc);
/// One arrival that also expects `bytes` of TMA transactions.
void arriveExpectTx(OpBuilder &b, Location loc, Value barrier, int64_t bytes);
/// One arrival.
void arrive(OpBuilder &b, Location loc, Value barrier);
/// Spins until the barrier's phase with parity `parity` (i32 0/1) completed.
void waitParity(OpBuilder &b, Location loc, Value barrier, Value parity);

/// cp.async.bulk.tensor.4d of the box at `coords` (innermost first, i32)
/// of the grid-constant tensor map `tensorMap` (!llvm.ptr) into `dst`,
/// completing on `barrier`.
void tmaLoad(OpBuilder &b, Location loc, Value dst, Value tensorMap,
             ArrayRef<Value> coords, Value barrier);

/// cp.reduce.async.bulk.tensor.4d .add: the box at `coords` of the tensor
/// map `tensorMap` += the shared tile at `src` (f32: the backward's dQ_i),
/// in this thread's current bulk group.
void tmaReduceAdd(OpBuilder &b, Location loc, Value src, Value tensorMap,
                  ArrayRef<Value> coords);
/// cp.async.bulk.tensor.4d store: the box at `coords` of `tensorMap` = the
/// shared tile at `src` (rows and columns out of the map's bounds are not
/// written), in this thread's current bulk group.
void tmaStore(OpBuilder &b, Location loc, Value src, Value tensorMap,
              ArrayRef<Value> coords);
/// cp.async.bulk.commit_group, and wait_group (`readOnly`: until the
/// groups' sources may be overwritten, not until their writes land).
void bulkCommit(OpBuilder &b, Location loc);
void bulkWait(OpBuilder &b, Location loc, int64_t pending, bool readOnly);

/// bar.sync / bar.arrive on named barrier `id` (i32, never 0: gpu.barrier
/// uses it) for `threads` threads; the arrive only where `condition` (i1)
/// holds, if given.
void namedBarrierSync(OpBuilder &b, Location loc, Value id, int64_t threads);
void namedBarrierArrive(OpBuilder &b, Location loc, Value id, int64_t threads,
                        Value condition = Value());

/// setmaxnreg.{inc,dec}: the warpgroup's register budget from here on.
void setMaxRegisters(OpBuilder &b, Location loc, int64_t count, bool increase);

/// wgmma.fence / commit_group / wait_group.
void wgmmaFence(OpBuilder &b, Location loc);
void wgmmaCommit(OpBuilder &b, Location loc);
void wgmmaWait(OpBuilder &b, Location loc, int64_t pending);
/// wgmma.wait_group with `values` (f32 accumulators of the awaited
/// wgmmas) carried through it: the returned copies are only readable after
/// the wait, whatever the compiler reorders.
SmallVector<Value> wgmmaWait(OpBuilder &b, Location loc, int64_t pending,
                             ArrayRef<Value> values);

/// A wgmma shared-memory matrix descriptor (PTX ISA "Matrix Descriptor
/// Format") for a 128-byte-swizzled operand at shared address `address`:
/// `leadingBytes` and `strideBytes` as the ISA defines them for the
/// operand's major-ness. Returns an i64.
Value matrixDescriptor(OpBuilder &b, Location loc, Value address,
                       int64_t leadingBytes, int64_t strideBytes);

/// A wgmma operand in shared memory: its matrix descriptor (i64) and a
/// byte offset into it (a multiple of 16 that stays inside the 256 KB
/// window, so the 14-bit address field never carries). wgmma adds the
/// offset inside its PTX: as an LLVM add, `descriptor + offset` is hoisted
/// out of every loop where the descriptor is invariant (the backward's K
/// and V, the forward's Q), one 64-bit register per k step held across
/// the loop (88 descriptors in the D256 backward).
struct SharedOperand {
  Value descriptor;
  int64_t bytes = 0;
};

/// One wgmma.mma_async with f32 accumulators `acc` (N/2 values), updated
/// in place: m64nNk16 for f16 and bf16, m64nNk32 for f8E4M3FN (e4m3 both
/// sides, B K-major only). A and B in shared memory; `transposeB` reads B
/// N-major, `transposeA` A M-major.
SmallVector<Value> wgmma(OpBuilder &b, Location loc, Type inputType,
                         ArrayRef<Value> acc, SharedOperand a, SharedOperand bOperand,
                         bool transposeB, bool transposeA = false);
/// The same with A in four 32-bit registers.
SmallVector<Value> wgmma(OpBuilder &b, Location loc, Type inputType,
                         ArrayRef<Value> acc, ArrayRef<Value> aRegisters,
                         SharedOperand bOperand, bool transposeB);

/// The bytes of K (and of the MMA's k step) one wgmma consumes: 16
/// elements of a 16-bit type, 32 of e4m3; always 32 bytes.
int64_t wgmmaDepth(Type inputType);

/// ldmatrix.sync.aligned.m8n8.x{matrices}.trans.shared.b16 (1, 2 or 4):
/// 8 x 8 b16 matrices, lanes 8q .. 8q + 7 giving the 16-byte rows of
/// matrix q at `rowAddress` (+ `offset`); lane T receives, of matrix q,
/// rows 2(T % 4) and 2(T % 4) + 1 at column T / 4 (the first in the low
/// half).
SmallVector<Value> loadMatrixTransposed(OpBuilder &b, Location loc,
                                        Value rowAddress, int64_t offset,
                                        int64_t matrices);
/// stmatrix.sync.aligned.m8n8.x{1, 2, 4}.shared.b16 (one matrix per
/// register): lane T's register q holds row T / 4, columns 2(T % 4) and
/// 2(T % 4) + 1 of matrix q, whose rows lanes 8q .. 8q + 7 address at
/// `rowAddress` (+ `offset`).
void storeMatrix(OpBuilder &b, Location loc, Value rowAddress, int64_t offset,
                 ArrayRef<Value> registers);
/// prmt.b32: the four bytes the run-time (i32) `selector` picks from
/// {hi, lo} (lo's bytes 0-3, hi's 4-7; nibble i of the selector is result
/// byte i).
Value bytePermute(OpBuilder &b, Location loc, Value lo, Value hi,
                  Value selector);
/// Four f32 values rounded to e4m3 (cvt.rn.satfinite: RNE, saturating at
/// 448, as fa-expand-f8-casts) and packed into one 32-bit register,
/// `values[0]` in the lowest byte.
Value packE4M3x4(OpBuilder &b, Location loc, ArrayRef<Value> values);

/// fence.proxy.async.shared::cta: this thread's st.shared writes made
/// visible to the async proxy (a later wgmma reading them by descriptor).
void fenceProxyAsync(OpBuilder &b, Location loc);
/// fence.proxy.async (every state space): the async proxy's global writes
/// (a completed TMA reduce-add) and the generic proxy's ordered.
void fenceProxyAsyncAll(OpBuilder &b, Location loc);

} // namespace hopper
} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_HOPPER_HOPPERPTX_H
