//===- OutputStaging.h - a tile through shared memory and TMA ---*- C++ -*-===//
//
// Part of fa-mlir.
//
// The consumers' output tile stored through shared memory and a TMA
// store, each consumer warpgroup its own 64 rows, instead of 4-byte
// stores from the registers. Per tile: the warpgroup writes its rows
// (swizzled as TMA reads them: #fa.tma_shared panels of 64 columns),
// fences them for the async proxy and syncs on its named barrier; its
// leader, the warpgroup's first thread, stores one box per panel (rows
// past the tensor map's bounds are not written).
//
// In a region of its own the leader does not wait for the store: it
// drains under the next tile, and the next write waits (leader, then
// sync) for its read; `drain` waits for the last before the block exits.
// Lent a ring's slots (Layout::readBarrier) it waits for the read at once
// and arrives on that mbarrier, which the ring's producer waits for before
// it refills them.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_HOPPER_OUTPUTSTAGING_H
#define FA_LIB_CONVERSION_FATOGPU_HOPPER_OUTPUTSTAGING_H

#include "fa/Conversion/FAToGPU/KernelSkeleton.h"

#include <optional>

namespace mlir {
namespace fa {
namespace hopper {

class OutputStaging {
public:
  struct Layout {
    /// The staging: a workgroup memref [panels][rows][64] of the output
    /// element type (fa.store_shared's target).
    Value buffer;
    /// The shared-window address (i32) of the shared memory, and the
    /// staging's bytes past it.
    Value base;
    int64_t offset = 0;
    int64_t panels = 0; ///< 64-column panels
    int64_t rows = 0;   ///< the tile's rows: 64 per consumer warpgroup
    /// Warpgroup w's named barrier is firstBarrier + w (0 is gpu.barrier's).
    int64_t firstBarrier = 1;
    /// The output's tensor map (!llvm.ptr): a box of 64 rows by 64 columns
    /// at (column, row, head, batch).
    Value tensorMap;
    /// Lent a ring's slots: the mbarrier (bytes past base) each consumer
    /// warpgroup's leader arrives at once the store has read the staging.
    std::optional<int64_t> readBarrier;
  };

  explicit OutputStaging(const Layout &layout) : layout(layout) {}

  /// Whether the staging is lent by a ring (Layout::readBarrier).
  bool lent() const { return layout.readBarrier.has_value(); }

  /// This thread's warpgroup (i32), whether it is its leader (i1), and the
  /// warpgroup's named barrier (i32), computed where they are used
  /// (hoisted before the tiles, ptxas would schedule the consumers
  /// differently).
  struct Thread {
    Value group, leader, barrier;
  };
  Thread thread(OpBuilder &b, Location loc) const;

  /// The output tile `output` (the consumers' fragment, of the output
  /// element type) through the staging, stored at `grid`'s first query row
  /// of its head and batch.
  ///
  /// Lent a ring, the wait for the last store's read is behind every
  /// thread already when the schedule makes it so: the forward's threads
  /// waited for the tile's Vᵀ, transposed from V copied after the issuer
  /// waited for the last staged tile's arrivals. A change that breaks that
  /// chain must sync here first.
  void stage(OpBuilder &b, Location loc, Value output, const GridCoords &grid) const;

  /// After the tiles: the last stores must have read the staging before
  /// the block exits (lent a ring, each tile waited already).
  void drain(OpBuilder &b, Location loc) const;

private:
  /// The leader's wait until its stores have read the staging.
  static void awaitRead(OpBuilder &b, Location loc, Value leader);

  Layout layout;
};

} // namespace hopper
} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_HOPPER_OUTPUTSTAGING_H
