// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s
// RUN: rm -rf %t && fa-compile %s --target sm_90a -o %t > /dev/null
// RUN: FileCheck %s --check-prefix=PTX3 < %t/d64_three_warpgroups.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/d64_three_warpgroups.json

// D64 takes three consumer warpgroups (block_m 192, 12 MMA warps, 512
// threads) at 160 registers each, the producer at 32; the turns go round
// robin: warpgroup w arrives on barrier (w + 1) mod 3 + 1. Without a mask
// the kernel is persistent: block b takes tiles b, b + gridDim.x, ... of
// ceil(M / 192)·Hq·B, decoded in 32 bits, in both roles, carrying the
// tile count (Q's phase) and the KV tiles loaded so far (the rings').
// CHECK-LABEL: gpu.func @d64_three_warpgroups
// CHECK-SAME: nvvm.maxntid = array<i32: 512, 1, 1>
// CHECK: %[[FIRST_TILE:[^ ]+]] = gpu.block_id x
// CHECK: %[[STEP:[^ ]+]] = gpu.grid_dim x
// CHECK: nvvm.setmaxregister {{ *}}decrease 32
// CHECK: scf.for %{{[^ ]+}} = %[[FIRST_TILE]] to %[[TILES:[^ ]+]] step %[[STEP]] iter_args(%{{[^ ]+}} = %c0, %{{[^ ]+}} = %c0) -> (index, index)
// CHECK: arith.divui %{{[^ ]+}}, %{{[^ ]+}} : i32
// CHECK: nvvm.cp.async.bulk.tensor.
// CHECK: nvvm.setmaxregister {{ *}}increase 160
// CHECK: arith.remui %{{[^,]+}}, %c3_i32 : i32
// CHECK: scf.for %{{[^ ]+}} = %[[FIRST_TILE]] to %[[TILES]] step %[[STEP]] iter_args(
// CHECK: fa.qk_scores {{.*}} -> tensor<192x128xf32, #fa.fragment<warps = 12, mTiles = 1
// CHECK: fa.store_fragment
// CHECK: scf.yield
// PTX3: .maxntid 512, 1, 1
// PTX3-DAG: setmaxnreg.dec.sync.aligned.u32 32;
// PTX3-DAG: setmaxnreg.inc.sync.aligned.u32 160;
// PTX3-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
func.func @d64_three_warpgroups(%q: tensor<1x1x384x64xbf16>, %k: tensor<1x1x256x64xbf16>, %v: tensor<1x1x256x64xbf16>)
    -> (tensor<1x1x384x64xbf16>, tensor<1x1x384xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {tile = #fa.tile<block_m = 192, block_n = 128, stages = 2, warps = 12>}
      : (tensor<1x1x384x64xbf16>, tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>)
      -> (tensor<1x1x384x64xbf16>, tensor<1x1x384xf32>)
  return %o, %lse : tensor<1x1x384x64xbf16>, tensor<1x1x384xf32>
}

// The manifest names the persistent scheduler; the runtime sizes the grid.
// MANIFEST: "tile": {"block_m": 192, "block_n": 128, "stages": 2, "warps": 12},
// MANIFEST-NEXT: "schedule": {{{.*}}"tile_order": "strided", "register_budget": "32/160"},
// MANIFEST-NEXT: "block": [512, 1, 1],
// MANIFEST-NEXT: "scheduler": "persistent",
