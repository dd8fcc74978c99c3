//===- TmaRing.h - a ring of shared buffers and its mbarriers ---*- C++ -*-===//
//
// Part of fa-mlir.
//
// A ring of `stages` slots in shared memory, each guarded by two mbarriers:
// `full` (the slot holds its data) and `empty` (its readers are done). Its
// n-th use takes slot s = n mod stages, the (n / stages)-th use of that
// slot, whose phases alternate in parity:
//
//   producer                                consumers
//   acquire: wait empty[s], parity p ^ 1    wait: wait full[s], parity p
//   commit: arrive.expect_tx full[s]        ... read the slot ...
//   copy: TMA into slot s → full[s]         release: arrive empty[s]
//
// (p = (n / stages) mod 2.) A fresh barrier's "previous phase" counts as
// complete, so the producer's first wait on each empty barrier (parity 1)
// passes at once. A full barrier expects one arrival plus the copies'
// bytes (TMA's complete_tx) where TMA fills the slot, or every writing
// thread's arrival (commitWrites) where threads do; an empty barrier
// expects every reader's arrival. The ring reads the same data the other
// way round where TMA drains it (the backward's dQ staging: the consumers
// write, a producer thread's reduce-adds read).
//
// The barriers are where the schedule's shared-memory plan puts them:
// slot s's at `offset + stride · s` bytes past the base, so that two rings
// may interleave theirs (the forward's K and V) or share one (the e4m3
// staging ring and Vᵀ's release). The ring owns no memory and builds its
// addresses where it is asked for them.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_HOPPER_TMARING_H
#define FA_LIB_CONVERSION_FATOGPU_HOPPER_TMARING_H

#include "mlir/IR/Builders.h"

namespace mlir {
namespace fa {
namespace hopper {

/// Where a ring's n-th use lands: its slot (n's type, index or i32) and
/// the parity (i32) of that slot's use.
struct RingPosition {
  Value stage, parity;
};

/// One kind of a ring's mbarriers (8 bytes each): slot s's at `offset +
/// stride · s` bytes past the ring's base, expecting `arrivals` per phase.
struct RingBarriers {
  int64_t offset = 0;
  int64_t stride = 8;
  int64_t arrivals = 1;
};

/// A TMA box of a tile: `panels` panels of `rows` rows of 128 bytes
/// (`panelElements` elements) at (panelElements · panel, row, head, batch)
/// of a rank-4 tensor map; the panels lie `rows` · 128 bytes apart in the
/// slot (the #fa.tma_shared layout).
struct TmaBox {
  int64_t panels = 1;
  int64_t rows = 0;
  int64_t panelElements = 64;
  Value row, head, batch; ///< i32 coordinates
};

/// A ring of `stages` slots of `slotBytes` bytes at `offset` bytes past
/// `base` (the shared-window address of the kernel's shared memory, i32).
/// Rings of one stage address their slot and barriers with a null stage.
class TmaRing {
public:
  TmaRing() = default;
  TmaRing(Value base, int64_t stages, int64_t offset, int64_t slotBytes,
          RingBarriers full, RingBarriers empty)
      : base(base), numStages(stages), offset(offset), slotBytes(slotBytes),
        full(full), empty(empty) {}

  int64_t stages() const { return numStages; }
  int64_t bytesPerSlot() const { return slotBytes; }

  // --- Parity bookkeeping.
  /// The slot and parity of the ring's `n`-th use (n an index or i32).
  RingPosition position(OpBuilder &b, Location loc, Value n) const;
  /// The phase parity (i32) of a barrier's `uses`-th use (an index or i32).
  static Value parityOf(OpBuilder &b, Location loc, Value uses);
  /// The parity that says a slot of use `parity` was released: the phase
  /// before it (use 0's passes at once on a fresh barrier).
  static Value releasedParity(OpBuilder &b, Location loc, Value parity);

  // --- Addresses (i32, shared window).
  Value slot(OpBuilder &b, Location loc, Value stage) const;
  Value fullBarrier(OpBuilder &b, Location loc, Value stage) const;
  Value emptyBarrier(OpBuilder &b, Location loc, Value stage) const;

  // --- Initialisation, by one thread before a block barrier (after
  // every ring's: fenceBarrierInit).
  void initFull(OpBuilder &b, Location loc, Value stage) const;
  void initEmpty(OpBuilder &b, Location loc, Value stage) const;
  /// Slot `stage`'s full, then its empty barrier.
  void init(OpBuilder &b, Location loc, Value stage) const;
  /// Every slot's, slot by slot.
  void init(OpBuilder &b, Location loc) const;

  // --- The producer.
  /// Waits until slot `stage` is free: its empty barrier passed the phase
  /// `released` (releasedParity of the use's parity).
  void acquire(OpBuilder &b, Location loc, Value stage, Value released) const;
  /// The one arrival on slot `stage`'s full barrier that expects `bytes`
  /// of TMA copies; returns the barrier, for the copies to complete on.
  Value commit(OpBuilder &b, Location loc, Value stage, int64_t bytes) const;
  /// A writing thread's arrival on slot `stage`'s full barrier (a ring
  /// filled by threads, not TMA).
  void commitWrites(OpBuilder &b, Location loc, Value stage) const;
  /// TMA copies of `box` of `tensorMap` into slot `stage`, completing on
  /// `barrier` (commit's, or another ring's whose slot this one shares).
  void copy(OpBuilder &b, Location loc, Value stage, Value tensorMap,
            const TmaBox &box, Value barrier) const;

  // --- The consumers.
  /// Waits until slot `stage` holds use `parity`'s data.
  void wait(OpBuilder &b, Location loc, Value stage, Value parity) const;
  /// This thread's arrival on slot `stage`'s empty barrier.
  void release(OpBuilder &b, Location loc, Value stage) const;

private:
  Value barrier(OpBuilder &b, Location loc, const RingBarriers &kind,
                Value stage) const;

  Value base;
  int64_t numStages = 1;
  int64_t offset = 0, slotBytes = 0;
  RingBarriers full, empty;
};

/// TMA copies of `box` of `tensorMap` into the shared address `dst`,
/// completing on `barrier`: one box per panel.
void copyBox(OpBuilder &b, Location loc, Value dst, Value tensorMap,
             const TmaBox &box, Value barrier);

} // namespace hopper
} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_HOPPER_TMARING_H
