// RUN: fa-opt %s --fa-tile="block-m=32 block-n=32" --canonicalize --cse -split-input-file | FileCheck %s
// canonicalize/cse only merge the constants each loop level creates.

// M = 100 queries (a partial last block), N = 70 keys (partial too), GQA 2:1.
// CHECK-LABEL: func.func @tile$causal_partial_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x100x16xf16>, %[[K:.*]]: tensor<1x1x70x16xf16>, %[[V:.*]]: tensor<1x1x70x8xf16>)
// Loops over (batch, head, Q block); GQA: query head h reads KV head h / 2.
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: %[[KVH:.*]] = arith.divui %[[H]], %c2
// CHECK: scf.for %[[Q0:.*]] = %{{.*}} to %c100 step %c32 iter_args
// The last Q block has 100 - 96 = 4 rows: slice what exists, pad to 32.
// CHECK: %[[ROWS:.*]] = arith.minsi
// CHECK: %[[QS:.*]] = tensor.extract_slice %[[Q]][0, %[[H]], %[[Q0]], 0] [1, 1, %[[ROWS]], 16]
// CHECK: %[[QT:.*]] = tensor.pad %[[QS]]
// CHECK: } : tensor<?x16xf16> to tensor<32x16xf16>
// Causal (bottom-right): this block sees keys up to q0 + rows - 1 + (N - M).
// CHECK: %[[END:.*]] = arith.minsi %{{.*}}, %c70
//
// 1. Row max: m = max_j S_ij over the visible KV blocks.
// CHECK: %[[M:.*]] = scf.for %[[K0:.*]] = %c0 to %[[END]] step %c32 iter_args(%[[MI:.*]] = %{{.*}}) -> (tensor<32xf32>)
// CHECK:   tensor.extract_slice %[[K]][0, %[[KVH]], %[[K0]], 0]
// CHECK:   %[[S:.*]] = fa.qk_scores %[[QT]], %{{.*}} {scale = 2.500000e-01 : f32} : tensor<32x16xf16>, tensor<32x16xf16> -> tensor<32x32xf32>
// CHECK:   %[[SM:.*]] = fa.apply_mask %[[S]], <causal> at[%[[Q0]], %[[K0]]] in[%c100, %c70]
// CHECK:   %[[BM:.*]] = fa.row_max %[[SM]]
// CHECK:   %[[MN:.*]] = arith.maxnumf %[[MI]], %[[BM]] : tensor<32xf32>
// CHECK:   scf.yield %[[MN]]
//
// 2. Sum of exp: l = sum_j exp(S_ij - m).
// CHECK: %[[L:.*]] = scf.for %[[K1:.*]] = %c0 to %[[END]] step %c32 iter_args(%[[LI:.*]] = %{{.*}}) -> (tensor<32xf32>)
// CHECK:   %[[S1:.*]] = fa.qk_scores
// CHECK:   %[[SM1:.*]] = fa.apply_mask %[[S1]]
// CHECK:   %[[P1:.*]] = fa.exp_shifted %[[SM1]], %[[M]] : tensor<32x32xf32>, tensor<32xf32>
// CHECK:   %[[PS:.*]] = fa.row_sum %[[P1]]
// CHECK:   %[[LN:.*]] = arith.addf %[[LI]], %[[PS]]
// CHECK:   scf.yield %[[LN]]
//
// A row with no visible key has l = 0: 1/l is taken as 0, not inf.
// CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[L]]
// CHECK: %[[RECIP:.*]] = arith.divf %{{.*}}, %[[L]]
// CHECK: %[[INVL:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[RECIP]]
//
// 3. Normalised P·V: O = sum_j (exp(S_ij - m) / l) V_j.
// CHECK: %[[O:.*]] = scf.for %[[K2:.*]] = %c0 to %[[END]] step %c32 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<32x8xf32>)
// CHECK:   %[[P2:.*]] = fa.exp_shifted %{{.*}}, %[[M]]
// CHECK:   %[[PN:.*]] = fa.scale_rows %[[P2]], %[[INVL]]
// CHECK:   tensor.extract_slice %[[V]][0, %[[KVH]], %[[K2]], 0]
// CHECK:   %[[ACCN:.*]] = fa.matmul %[[PN]], %{{.*}}, %[[ACC]] : tensor<32x32xf32>, tensor<32x8xf16>, tensor<32x8xf32>
// CHECK:   scf.yield %[[ACCN]]
//
// LSE = m + log(l); O back to f16; only the rows that exist are stored.
// CHECK: %[[LOGL:.*]] = math.log %[[L]]
// CHECK: %[[LSE:.*]] = arith.addf %[[M]], %[[LOGL]]
// CHECK: %[[OT:.*]] = arith.truncf %[[O]] : tensor<32x8xf32> to tensor<32x8xf16>
// CHECK: %[[OS:.*]] = tensor.extract_slice %[[OT]][0, 0] [%[[ROWS]], 8]
// CHECK: tensor.insert_slice %[[OS]] into %{{.*}}[0, %[[H]], %[[Q0]], 0] [1, 1, %[[ROWS]], 8]
// No M×N value anywhere:
// CHECK-NOT: tensor<{{.*}}100x70
// CHECK-NOT: fa.attention
func.func @tile$causal_partial_gqa(%q: tensor<1x2x100x16xf16>, %k: tensor<1x1x70x16xf16>, %v: tensor<1x1x70x8xf16>)
    -> (tensor<1x2x100x8xf16>, tensor<1x2x100xf32>) {
  %o, %lse = fa.attention %q, %k, %v {mask = #fa.mask<causal>}
      : (tensor<1x2x100x16xf16>, tensor<1x1x70x16xf16>, tensor<1x1x70x8xf16>)
      -> (tensor<1x2x100x8xf16>, tensor<1x2x100xf32>)
  return %o, %lse : tensor<1x2x100x8xf16>, tensor<1x2x100xf32>
}

// -----

// Full blocks: static slices, no padding; no mask: every KV block is visited.
// The op's #fa.tile (16 x 64) takes precedence over the pass options.
// CHECK-LABEL: func.func @tile$full_blocks_tile_attr
// CHECK-NOT: tensor.pad
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c16
// CHECK: tensor.extract_slice %{{.*}} [1, 1, 16, 32] [1, 1, 1, 1] : tensor<2x4x64x32xbf16> to tensor<16x32xbf16>
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c64 iter_args
// CHECK: fa.qk_scores {{.*}} {scale = 5.000000e-01 : f32, softcap = 3.000000e+01 : f32} : tensor<16x32xbf16>, tensor<64x32xbf16> -> tensor<16x64xf32>
// CHECK: fa.apply_mask {{.*}}, <none>
func.func @tile$full_blocks_tile_attr(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x128x32xbf16>, %v: tensor<2x4x128x32xbf16>)
    -> tensor<2x4x64x32xbf16> {
  %o = fa.attention %q, %k, %v
      {scale = 0.5 : f32, softcap = 30.0 : f32,
       tile = #fa.tile<block_m = 16, block_n = 64, stages = 1, warps = 1>}
      : (tensor<2x4x64x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>)
      -> tensor<2x4x64x32xbf16>
  return %o : tensor<2x4x64x32xbf16>
}

// -----

// M = 1: a single one-row block (block_m is clamped to M).
// CHECK-LABEL: func.func @tile$single_query
// CHECK: fa.qk_scores {{.*}} : tensor<1x64xf16>, tensor<32x64xf16> -> tensor<1x32xf32>
func.func @tile$single_query(%q: tensor<1x1x1x64xf16>, %k: tensor<1x1x147x64xf16>, %v: tensor<1x1x147x64xf16>)
    -> tensor<1x1x1x64xf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x1x64xf16>, tensor<1x1x147x64xf16>, tensor<1x1x147x64xf16>) -> tensor<1x1x1x64xf16>
  return %o : tensor<1x1x1x64xf16>
}

// -----

// A window starts its KV loop at the first block the Q block can see.
// CHECK-LABEL: func.func @tile$window_range
// CHECK: %[[SUB:.*]] = arith.subi %{{.*}}, %c40
// CHECK: %[[FIRST:.*]] = arith.maxsi %[[SUB]], %c0
// CHECK: %[[BLK:.*]] = arith.divui %[[FIRST]], %c32
// CHECK: %[[BEGIN:.*]] = arith.muli %[[BLK]], %c32
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %{{.*}} step %c32
func.func @tile$window_range(%q: tensor<1x1x256x16xf16>, %k: tensor<1x1x256x16xf16>, %v: tensor<1x1x256x16xf16>)
    -> tensor<1x1x256x16xf16> {
  %o = fa.attention %q, %k, %v {mask = #fa.mask<window(40, 0)>}
      : (tensor<1x1x256x16xf16>, tensor<1x1x256x16xf16>, tensor<1x1x256x16xf16>) -> tensor<1x1x256x16xf16>
  return %o : tensor<1x1x256x16xf16>
}

// -----

// ALiBi with [B, Hq] slopes: the head's slope is read once per (batch, head),
// and every sweep adds the bias to its score tile before the mask.
// CHECK-LABEL: func.func @tile$alibi_batch_head
// CHECK-SAME: %[[SLOPES:[^ :]+]]: tensor<2x2xf32>
// CHECK: scf.for %[[B:[^ ]+]] = %{{.*}} to %c2 step %c1 iter_args
// CHECK: scf.for %[[H:[^ ]+]] = %{{.*}} to %c2 step %c1 iter_args
// CHECK: %[[SLOPE:[^ ]+]] = tensor.extract %[[SLOPES]][%[[B]], %[[H]]] : tensor<2x2xf32>
// CHECK: scf.for %[[Q0:[^ ]+]] = %{{.*}} to %c40 step %c32 iter_args
// 1. Row max, over biased scores.
// CHECK: scf.for %[[K0:[^ ]+]] =
// CHECK:   %[[S:[^ ]+]] = fa.qk_scores
// CHECK:   %[[SB:[^ ]+]] = fa.alibi_bias %[[S]], %[[SLOPE]] at[%[[Q0]], %[[K0]]] in[%c40, %c50] : tensor<32x32xf32>
// CHECK:   fa.apply_mask %[[SB]], <causal> at[%[[Q0]], %[[K0]]] in[%c40, %c50]
// 2. Sum of exp and 3. P·V recompute the same biased tile.
// CHECK: scf.for
// CHECK:   fa.qk_scores
// CHECK:   fa.alibi_bias %{{.*}}, %[[SLOPE]]
// CHECK:   fa.apply_mask
// CHECK: scf.for
// CHECK:   fa.qk_scores
// CHECK:   fa.alibi_bias %{{.*}}, %[[SLOPE]]
// CHECK:   fa.apply_mask
// CHECK-NOT: fa.attention
func.func @tile$alibi_batch_head(%q: tensor<2x2x40x16xf16>, %k: tensor<2x1x50x16xf16>, %v: tensor<2x1x50x8xf16>,
                                 %slopes: tensor<2x2xf32>) -> tensor<2x2x40x8xf16> {
  %o = fa.attention %q, %k, %v alibi(%slopes) {mask = #fa.mask<causal>}
      : (tensor<2x2x40x16xf16>, tensor<2x1x50x16xf16>, tensor<2x1x50x8xf16>, tensor<2x2xf32>)
      -> tensor<2x2x40x8xf16>
  return %o : tensor<2x2x40x8xf16>
}

// -----

// [Hq] slopes are shared by every batch: indexed by the head alone.
// CHECK-LABEL: func.func @tile$alibi_head
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %c2 step %c1 iter_args
// CHECK: tensor.extract %{{.*}}[%[[H]]] : tensor<2xf32>
func.func @tile$alibi_head(%q: tensor<1x2x40x16xf16>, %k: tensor<1x2x50x16xf16>, %v: tensor<1x2x50x8xf16>,
                           %slopes: tensor<2xf32>) -> tensor<1x2x40x8xf16> {
  %o = fa.attention %q, %k, %v alibi(%slopes)
      : (tensor<1x2x40x16xf16>, tensor<1x2x50x16xf16>, tensor<1x2x50x8xf16>, tensor<2xf32>)
      -> tensor<1x2x40x8xf16>
  return %o : tensor<1x2x40x8xf16>
}
