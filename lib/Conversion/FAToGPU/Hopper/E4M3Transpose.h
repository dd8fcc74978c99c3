//===- E4M3Transpose.h - an e4m3 tile transposed in shared memory -*- C++ -*-===//
//
// Part of fa-mlir.
//
// e4m3 wgmma reads B K-major only, so the forward's V ([keys][columns] as
// TMA writes it) is transposed in shared memory into Vᵀ ([columns][keys],
// keys permuted by #fa.tma_shared keyMajor's σ within each 32) before P·V
// reads it. One warpgroup does it: the forward's producer, between V's
// copy and Vᵀ's release to the consumers.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_HOPPER_E4M3TRANSPOSE_H
#define FA_LIB_CONVERSION_FATOGPU_HOPPER_E4M3TRANSPOSE_H

#include "mlir/IR/Builders.h"

namespace mlir {
namespace fa {
namespace hopper {

/// The transpose of one e4m3 tile of `keys` rows and `columns` columns by
/// the warpgroup of `thread` (its index in the warpgroup, 0 .. 127: an
/// index or i32): from `source` (shared address, i32: [keys][columns] in
/// 128-column #fa.tma_shared panels) into `destination` ([columns][keys]
/// in 128-key panels, keyMajor's σ within each 32). `keys` is a multiple
/// of 32 and `columns` of 16; both addresses are multiples of 128 bytes
/// (the swizzle is applied by xors on bits 4-6 of them). The caller makes
/// the writes visible to wgmma (fenceProxyAsync) before releasing them.
///
/// sm_90 has no 8-bit ldmatrix, so the 16-bit matrix instructions move
/// byte pairs and two prmt per register pair finish the transpose (FA3's
/// form). Warp w takes the 32-key steps s = w, w + 4, ...; a task is 16
/// keys 32s + 16h .. + 15 by n = 4, 2 or 1 chunks of 16 columns (c0 ..
/// c0 + n - 1 of source panel P; c0 a multiple of n):
///   ldmatrix.x{n}.trans, twice (keys + 0 .. 7, then + 8 .. 15): matrix q
///     = chunk c0 + q (lane L gives key row L % 8); lane T gets, of each,
///     keys 2t, 2t + 1 (t = T % 4) at columns c, c + 1 (c = 16(c0 + q) +
///     2(T / 4));
///   prmt: keys {2t, 2t + 1, 2t + 8, 2t + 9} of column c (and of c + 1),
///     which σ places at Vᵀ positions 32s + 16h + 4t .. + 3;
///   stmatrix.x4 (.x2 where n = 1), per pair of chunks q0, q0 + 1:
///     matrix j = (chunk q0 + j / 2, parity j % 2) = Vᵀ rows 16·chunk +
///     2i + (parity ^ i / 4) (i = T / 4),
///     positions 32s + 16h .. + 15: lanes T >= 16 hold their two columns'
///     words swapped (prmt's selectors), so that each matrix covers rows
///     of all eight residues mod 8 (conflict-free).
/// Every address is a per-lane base plus a constant: the reads' swizzle
/// (chunk c0 + q xor the key's row % 8 = L % 8) is c0 xor the lane's own
/// (L / 8 xor L % 8), and a step's key rows move in multiples of 8, so the
/// only run-time arithmetic is one xor per nonzero c0 (4; 2 or 6 where the
/// columns are not a multiple of 64) and h = 1's (the stores' key chunk 2w
/// + h xor the row's residue). The per-column-group form (four key groups
/// of one chunk) needed a swizzle xor for every ldmatrix and held only one
/// load in flight: the producer, the D256 kernel's bottleneck, spent its
/// iterations on addresses. scripts/fp8-transpose-sim.py (a lit test)
/// simulates it byte by byte with these address expressions against σ and
/// counts the ways: a change here must be made there too.
void transposeValueTile(OpBuilder &b, Location loc, Value thread, Value source,
                       Value destination, int64_t keys, int64_t columns);

} // namespace hopper
} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_HOPPER_E4M3TRANSPOSE_H
