//===- Pingpong.h - consumer warpgroups issuing their MMAs in turn -*- C++ -*-===//
//
// Part of fa-mlir.
//
// FA3's warp scheduler barrier: the consumer warpgroups issue their MMAs
// in turn, round robin, so that one's softmax runs under the others'
// GEMMs. Warpgroup w syncs on its named barrier before issuing
// (beforeIssue) and arrives on its successor's after (afterIssue). The
// turns run on across the block's tiles (every warpgroup takes the same
// tiles, so the same number of turns): the last warpgroup gives the first
// its first turn before the tiles (start), and the first takes that last
// arrival after them (drain), so every barrier phase completes (no
// arrival left pending).
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_HOPPER_PINGPONG_H
#define FA_LIB_CONVERSION_FATOGPU_HOPPER_PINGPONG_H

#include "mlir/IR/Builders.h"

namespace mlir {
namespace fa {
namespace hopper {

class Pingpong {
public:
  /// The syncing and the arriving warpgroup: each named barrier's count.
  static constexpr int64_t kThreads = 2 * 128;

  /// `groups` warpgroups (threads 0 .. 128 · groups - 1, the consumers)
  /// taking turns on named barriers `firstBarrier` .. `firstBarrier` +
  /// groups - 1 (warpgroup w's is firstBarrier + w; 0 is gpu.barrier's).
  /// Fewer than two warpgroups take no turns: every method then emits
  /// nothing. Computes the thread's barriers and roles here, once.
  Pingpong(OpBuilder &b, Location loc, int64_t groups, int64_t firstBarrier = 1);

  bool enabled() const { return groups >= 2; }
  /// The named barriers the turns take (none where not enabled).
  int64_t barriers() const { return enabled() ? groups : 0; }

  /// Before the tiles: the first turn is warpgroup 0's.
  void start(OpBuilder &b, Location loc) const;
  /// After the tiles: warpgroup 0 takes the last warpgroup's last arrival.
  void drain(OpBuilder &b, Location loc) const;
  /// Around each issue of the warpgroup's MMAs: wait for its turn, then
  /// give the next warpgroup its turn.
  void beforeIssue(OpBuilder &b, Location loc) const;
  void afterIssue(OpBuilder &b, Location loc) const;

private:
  int64_t groups = 0;
  int64_t firstBarrier = 1;
  // i32 barrier ids and i1 flags, computed once (the constructor).
  Value ownBarrier, nextBarrier, isFirstGroup, isLastGroup;
};

} // namespace hopper
} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_HOPPER_PINGPONG_H
