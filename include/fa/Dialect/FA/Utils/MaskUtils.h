//===- MaskUtils.h - the mask's semantics, as IR ----------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// One definition of docs/design.md's masks for every lowering that emits them
// (the CPU linalg bodies, the GPU kernels, the tilers' KV ranges), so the
// semantics cannot drift between paths. The float64 reference in runtime/
// keeps its own, deliberately independent, copy.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_UTILS_MASKUTILS_H
#define FA_DIALECT_FA_UTILS_MASKUTILS_H

#include "fa/Dialect/FA/IR/FAAttrs.h"

#include "mlir/IR/Builders.h"

#include <optional>
#include <utility>

namespace mlir {
namespace fa {

/// i1: key `key` is visible to query `query` among `queryLen` queries and
/// `keyLen` keys (all index values), and exists (key < keyLen).
Value buildKeyVisible(OpBuilder &b, Location loc, MaskAttr mask, Value query,
                      Value key, Value queryLen, Value keyLen);

/// The keys query `query` sees form one interval (docs/design.md's masks are
/// bands): [first, last], `first` null when the mask has no left bound
/// (it is then 0), `last` at most keyLen - 1. Index values.
std::pair<Value, Value> buildVisibleKeyInterval(OpBuilder &b, Location loc,
                                                MaskAttr mask, Value query,
                                                Value queryLen, Value keyLen);

/// [begin, end): the keys that queries [q0, q0 + rows) can see, `begin`
/// rounded down to a multiple of `blockN` so KV tiles stay aligned. For
/// no mask this is [0, keyLen). All index values.
std::pair<Value, Value> buildVisibleKeyRange(OpBuilder &b, Location loc,
                                             MaskAttr mask, Value q0,
                                             Value rows, Value queryLen,
                                             Value keyLen, int64_t blockN);

/// The keys a mask_mod region lets a query see, where the compiler can read
/// them off the region: every visible (q_idx, kv_idx) has
/// q_idx + fromQueryLower <= kv_idx <= q_idx + fromQueryUpper and
/// lower <= kv_idx <= upper, each bound where stated. The region's yield is
/// read as a conjunction (arith.andi) of comparisons (arith.cmpi) between
/// kv_idx, q_idx and constants; any other conjunct only hides more keys and
/// is left out, so the bounds hold for every region (none: the region is
/// not bounded that way). Interval analysis, no evaluation.
struct MaskModKeyBand {
  std::optional<int64_t> fromQueryLower, fromQueryUpper, lower, upper;
  /// Every conjunct was read: the region is exactly the band, so a tile
  /// inside it needs no evaluation.
  bool exact = false;
  bool bounded() const {
    return fromQueryLower || fromQueryUpper || lower || upper;
  }
};
MaskModKeyBand analyzeMaskModKeyBand(Region &maskMod);

/// Whether some (query, key) of the tile [q0, q0 + rows) x [k0, k0 + cols)
/// may lie outside `band` (an i1): false means every key of it is visible
/// to every query where the band is exact.
Value buildTileLeavesBand(OpBuilder &b, Location loc, const MaskModKeyBand &band,
                          Value q0, Value k0, int64_t rows, int64_t cols);

/// [begin, end): the keys that queries [q0, q0 + rows) can see under
/// `band` (the region sees q0 + rows - 1 < queryLen), `begin` rounded down
/// to a multiple of `blockN`, both in [0, keyLen] (end may be below begin:
/// no key). Index values.
std::pair<Value, Value> buildBandKeyRange(OpBuilder &b, Location loc,
                                          const MaskModKeyBand &band, Value q0,
                                          Value rows, Value keyLen,
                                          int64_t blockN);

/// The transpose, for the backward's KV-outer loop: [begin, end), the
/// queries in [0, queryLen) that can see some key of [k0, k0 + cols) under
/// `band`, `begin` rounded down to a multiple of `blockM` (end may be at
/// or below begin: no query). Index values.
std::pair<Value, Value> buildBandQueryRange(OpBuilder &b, Location loc,
                                            const MaskModKeyBand &band, Value k0,
                                            Value cols, Value queryLen,
                                            int64_t blockM);

/// The transpose of buildVisibleKeyRange, for the backward's KV-outer
/// loop: [begin, end), the queries that see some key of [k0, k0 + cols),
/// `begin` rounded down to a multiple of `blockM`; empty (end = begin)
/// where no query sees any of them. For no mask [0, queryLen). All index
/// values.
std::pair<Value, Value> buildVisibleQueryRange(OpBuilder &b, Location loc,
                                               MaskAttr mask, Value k0,
                                               Value cols, Value queryLen,
                                               Value keyLen, int64_t blockM);

/// True (i1) when the tile of queries [q0, q0 + blockM) × keys [k0, k0 +
/// blockN) has an invisible (query, key) pair under `mask`, or keys past N:
/// the tiles whose scores must be masked element by element. Every other
/// tile skips the per-element index arithmetic.
Value buildTileNeedsMask(OpBuilder &b, Location loc, MaskAttr mask, Value q0,
                         Value k0, int64_t blockM, int64_t blockN,
                         Value queryLen, Value keyLen);

/// [begin, end): the keys every query of [q0, q0 + blockM) sees (and that
/// exist): a KV tile inside it needs no mask (buildTileNeedsMask is false),
/// so a schedule can run those tiles in a loop of their own without the
/// mask's branch. `begin` is 0 unless a window has a left edge. The interval
/// may be empty (end <= begin). Index values.
std::pair<Value, Value> buildUnmaskedKeyRange(OpBuilder &b, Location loc,
                                              MaskAttr mask, Value q0,
                                              int64_t blockM, Value queryLen,
                                              Value keyLen);

/// The transpose, for a KV-outer loop: [begin, end), the query rows that
/// see every key of [k0, k0 + blockN) (all of which exist): a Q block
/// inside it needs no mask (buildTileNeedsMask is false). `end` is null
/// where no mask bounds the rows from above (only a window's left edge
/// does); the interval is empty (begin = keyLen + queryLen, past every
/// row) where the tile has keys past N. Index values.
std::pair<Value, Value> buildUnmaskedQueryRange(OpBuilder &b, Location loc,
                                                MaskAttr mask, Value k0,
                                                int64_t blockN, Value queryLen,
                                                Value keyLen);

} // namespace fa
} // namespace mlir

#endif // FA_DIALECT_FA_UTILS_MASKUTILS_H
