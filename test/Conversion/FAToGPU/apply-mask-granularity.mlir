// fa.apply_mask's lowerings (FragmentLoweringOptions: maskPerWarp and
// maskByInterval, the strategy's choices). The decision: sm_90a per warp
// (a warp-uniform branch; its first row is the block's q0 +
// (thread / 32) · 16), sm_80 per tile (the tile's last key against its
// first row, no warp in it: per warp the warp's first row is a register
// too many there). The element test, on both: one 32-bit compare of its
// row's last visible key, relative to the tile (clamped to [-1, 128]) and
// to the thread's first column, against the element's column offset, an
// immediate (so no per-element column register lives across the KV loop),
// instead of 64-bit index arithmetic per element (buildKeyVisible).
// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a" \
// RUN:   | fa-opt --fa-gpu-lower-fragments="chip=sm_90a" --canonicalize --cse \
// RUN:   | FileCheck %s --check-prefix=WARP
// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80" \
// RUN:   | fa-opt --fa-gpu-lower-fragments="chip=sm_80" --canonicalize --cse \
// RUN:   | FileCheck %s --check-prefix=TILE

// WARP-LABEL: gpu.func @causal_d64
// WARP: %[[WARP:[^ ]+]] = arith.divui %thread_id_x, %c32 : index
// WARP-NEXT: %[[WARP_ROWS:[^ ]+]] = arith.muli %[[WARP]], %c16 : index
// WARP-NEXT: %[[FIRST_ROW:[^ ]+]] = arith.addi %{{[^,]+}}, %[[WARP_ROWS]] : index
// WARP-NEXT: arith.cmpi
// WARP-NEXT: %[[DIAG:[^ ]+]] = arith.addi %[[FIRST_ROW]], %{{[^ ]+}} : index
// WARP-NEXT: arith.cmpi slt, %[[DIAG]], %c127 : index
// WARP-NEXT: %[[NEED:[^ ]+]] = arith.ori
// WARP-NEXT: scf.if %[[NEED]] -> (vector<64xf32>) {
// WARP: %[[PAIR:[^ ]+]] = arith.muli %{{[^,]+}}, %c2 : index
// WARP-NEXT: %[[FIRST_COLUMN:[^ ]+]] = arith.index_cast %[[PAIR]] : index to i32
// WARP: arith.maxsi %{{[^,]+}}, %c-1 : index
// WARP-NEXT: arith.minsi %{{[^,]+}}, %c128 : index
// WARP-NEXT: %[[LAST:[^ ]+]] = arith.index_cast %{{[^ ]+}} : index to i32
// WARP-NEXT: %[[BOUND:[^ ]+]] = arith.subi %[[LAST]], %[[FIRST_COLUMN]] : i32
// WARP: %[[VISIBLE:[^ ]+]] = arith.cmpi sge, %[[BOUND]], %c0_i32 : i32
// WARP-NEXT: arith.select %[[VISIBLE]], %{{[^,]+}}, %cst{{.*}} : f32
// WARP-NEXT: %[[VISIBLE1:[^ ]+]] = arith.cmpi sge, %[[BOUND]], %c1_i32 : i32
// WARP-NOT: arith.cmpi sle, {{.*}} : index
// WARP: scf.yield

// TILE-LABEL: gpu.func @causal_d64
// The decision straight after S (no warp row): the tile's last key against
// the key length and against the tile's first row on the diagonal.
// TILE: vector.from_elements {{.*}} : vector<64xf32>
// TILE-NEXT: %[[LAST_KEY:[^ ]+]] = arith.addi %{{[^,]+}}, %c127 : index
// TILE-NEXT: arith.cmpi sge, %[[LAST_KEY]], %{{[^ ]+}} : index
// TILE-NEXT: %[[DIAG:[^ ]+]] = arith.addi %{{[^,]+}}, %{{[^ ]+}} : index
// TILE-NEXT: arith.cmpi sgt, %[[LAST_KEY]], %[[DIAG]] : index
// TILE-NEXT: %[[NEED:[^ ]+]] = arith.ori
// TILE-NEXT: scf.if %[[NEED]] -> (vector<64xf32>) {
// The element test by interval, as on sm_90a.
// TILE-NEXT: arith.remui %{{[^,]+}}, %c4 : index
// TILE-NEXT: %[[PAIR:[^ ]+]] = arith.muli %{{[^,]+}}, %c2 : index
// TILE-NEXT: %[[FIRST_COLUMN:[^ ]+]] = arith.index_cast %[[PAIR]] : index to i32
// TILE: arith.maxsi %{{[^,]+}}, %c-1 : index
// TILE-NEXT: arith.minsi %{{[^,]+}}, %c128 : index
// TILE-NEXT: %[[LAST:[^ ]+]] = arith.index_cast %{{[^ ]+}} : index to i32
// TILE-NEXT: %[[BOUND:[^ ]+]] = arith.subi %[[LAST]], %[[FIRST_COLUMN]] : i32
// TILE: %[[VISIBLE:[^ ]+]] = arith.cmpi sge, %[[BOUND]], %c0_i32 : i32
// TILE-NEXT: arith.select %[[VISIBLE]], %{{[^,]+}}, %cst{{.*}} : f32
// TILE-NEXT: %[[VISIBLE1:[^ ]+]] = arith.cmpi sge, %[[BOUND]], %c1_i32 : i32
// TILE-NOT: arith.cmpi sle, {{.*}} : index
// TILE: scf.yield
func.func @causal_d64(%q: tensor<1x1x256x64xbf16>, %k: tensor<1x1x256x64xbf16>, %v: tensor<1x1x256x64xbf16>)
    -> (tensor<1x1x256x64xbf16>, tensor<1x1x256xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {mask = #fa.mask<causal>,
       tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8>}
      : (tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>)
      -> (tensor<1x1x256x64xbf16>, tensor<1x1x256xf32>)
  return %o, %lse : tensor<1x1x256x64xbf16>, tensor<1x1x256xf32>
}
