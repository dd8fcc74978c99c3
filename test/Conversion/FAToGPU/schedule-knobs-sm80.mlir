// mask_per_warp = true on sm_80 (whose default decides fa.apply_mask per
// tile): fa-gpu-distribute marks the kernel's fa.apply_mask ops, and
// fa-gpu-lower-fragments decides per warp from the warp's first row, as it
// does on sm_90a (apply-mask-granularity.mlir). query_in_registers = false
// re-reads Q's fragments from shared memory per KV tile: no
// fa.load_operand of Q before the loop.
// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80" \
// RUN:   | FileCheck %s --check-prefix=DIST
// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80" \
// RUN:   | fa-opt --fa-gpu-lower-fragments="chip=sm_80" --canonicalize --cse \
// RUN:   | FileCheck %s
// DIST-LABEL: gpu.func @per_warp
// DIST-NOT: fa.load_operand
// DIST: fa.apply_mask {{.*}} {fa.mask_per_warp = true}
// Straight after S: the warp's first row (two m-tiles, 32 rows a warp),
// then the tile's last key.
// CHECK-LABEL: gpu.func @per_warp
// CHECK: %[[WARP:[^ ]+]] = arith.divui %thread_id_x, %c32 : index
// CHECK-NEXT: %[[WARP_ROWS:[^ ]+]] = arith.muli %[[WARP]], %c32 : index
// CHECK: vector.from_elements {{.*}} : vector<64xf32>
// CHECK-NEXT: arith.addi %{{[^,]+}}, %[[WARP_ROWS]] : index
// CHECK-NEXT: arith.addi %{{[^,]+}}, %c63 : index
func.func @per_warp(%q: tensor<1x1x256x64xbf16>, %k: tensor<1x1x256x64xbf16>, %v: tensor<1x1x256x64xbf16>)
    -> (tensor<1x1x256x64xbf16>, tensor<1x1x256xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {mask = #fa.mask<causal>,
       tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4,
                       schedule = {mask_per_warp = true, query_in_registers = false}>}
      : (tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>)
      -> (tensor<1x1x256x64xbf16>, tensor<1x1x256xf32>)
  return %o, %lse : tensor<1x1x256x64xbf16>, tensor<1x1x256xf32>
}
