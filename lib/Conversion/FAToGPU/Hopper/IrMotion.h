//===- IrMotion.h - moving ops and placing MMA waits in a block -*- C++ -*-===//
//
// Part of fa-mlir.
//
// What a schedule uses to reorder the math it cloned into a loop body:
// moving an op together with the ops of its block it depends on, and
// awaiting an asynchronous MMA (fa.mma_wait) where its result is first
// needed, so that the MMAs issued between run in flight.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_HOPPER_IRMOTION_H
#define FA_LIB_CONVERSION_FATOGPU_HOPPER_IRMOTION_H

#include "fa/Dialect/FA/IR/FAOps.h"

namespace mlir {
namespace fa {
namespace hopper {

/// `op` and the ops of `anchor`'s block it depends on that come after
/// `anchor`, in their order.
SmallVector<Operation *> operandsAfter(Operation *op, Operation *anchor);
/// Moves `op` and what it depends on after `anchor` to right after `anchor`.
void hoistAfter(Operation *op, Operation *anchor);
/// Moves `op` and what it depends on after `anchor` to right before it.
void moveBeforeWithOperands(Operation *op, Operation *anchor);
/// The first of `op`'s users in its block's order (null if none).
Operation *firstUser(Operation *op);

/// `mma`'s uses (but `wait`) read `wait`'s result instead.
void readThroughWait(Operation *mma, MmaWaitOp wait);
/// An fa.mma_wait of `mma`'s result with `pending` MMAs left in flight,
/// right before `before`; `mma`'s other uses read it.
MmaWaitOp awaitAt(Operation *mma, Operation *before, int64_t pending);
/// Whether `mma` reads the shared buffer `buffer` (an operand's
/// fa.shared_tile).
bool readsBuffer(TileMatmulOp mma, Value buffer);

} // namespace hopper
} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_HOPPER_IRMOTION_H
