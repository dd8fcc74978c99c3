// #fa.tile's schedule dictionary overrides the chip's tuned schedule knobs
// (Tuning.h, docs/tuning.md): fa-tile carries it to the loop nest and
// fa-gpu-distribute builds the kernel with it.
//
// The tuned sm_90a forward splits the unmasked KV tiles into a loop of
// their own (two pipelined loops under a causal mask); with
// splits_unmasked_tiles = false there is one, which applies the mask to
// every tile. tile_order = "per_block" takes one tile per block from the
// grid: no persistent loop over tiles.
// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s
// CHECK-LABEL: gpu.func @tuned
// CHECK: arith.ceildivui %{{.*}}, %grid_dim_x
// CHECK: fa.apply_mask
// CHECK: scf.for {{.*}} -> (tensor<128xf32
// CHECK-NOT: fa.apply_mask
// CHECK: scf.for {{.*}} -> (tensor<128xf32
// CHECK: fa.apply_mask
// CHECK-LABEL: gpu.func @overridden
// CHECK-NOT: arith.ceildivui
// CHECK: fa.apply_mask
// CHECK: scf.for {{.*}} -> (tensor<128xf32
// CHECK: fa.apply_mask
// CHECK-NOT: scf.for {{.*}} -> (tensor<128xf32
// CHECK: gpu.return
//
// mask_per_warp = false on sm_90a (whose default is per warp): the
// kernel's fa.apply_mask ops say so, for fa-gpu-lower-fragments
// (schedule-knobs-sm80.mlir lowers the reverse).
// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a" | FileCheck %s --check-prefix=ATTR
// ATTR-LABEL: gpu.func @tuned
// ATTR-NOT: fa.mask_per_warp
// ATTR-LABEL: gpu.func @overridden
// ATTR: fa.apply_mask {{.*}} {fa.mask_per_warp = false}
//
// The attribute's text round-trips.
// RUN: fa-opt %s | FileCheck %s --check-prefix=ROUND
// ROUND: #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8, schedule = {mask_per_warp = false, splits_unmasked_tiles = false, tile_order = "per_block"}>

func.func @tuned(%q: tensor<1x1x1024x128xbf16>, %k: tensor<1x1x1024x128xbf16>, %v: tensor<1x1x1024x128xbf16>)
    -> (tensor<1x1x1024x128xbf16>, tensor<1x1x1024xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {mask = #fa.mask<causal>,
       tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8>}
      : (tensor<1x1x1024x128xbf16>, tensor<1x1x1024x128xbf16>, tensor<1x1x1024x128xbf16>)
      -> (tensor<1x1x1024x128xbf16>, tensor<1x1x1024xf32>)
  return %o, %lse : tensor<1x1x1024x128xbf16>, tensor<1x1x1024xf32>
}

func.func @overridden(%q: tensor<1x1x1024x128xbf16>, %k: tensor<1x1x1024x128xbf16>, %v: tensor<1x1x1024x128xbf16>)
    -> (tensor<1x1x1024x128xbf16>, tensor<1x1x1024xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {mask = #fa.mask<causal>,
       tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8,
                       schedule = {splits_unmasked_tiles = false, tile_order = "per_block",
                                   mask_per_warp = false}>}
      : (tensor<1x1x1024x128xbf16>, tensor<1x1x1024x128xbf16>, tensor<1x1x1024x128xbf16>)
      -> (tensor<1x1x1024x128xbf16>, tensor<1x1x1024xf32>)
  return %o, %lse : tensor<1x1x1024x128xbf16>, tensor<1x1x1024xf32>
}
