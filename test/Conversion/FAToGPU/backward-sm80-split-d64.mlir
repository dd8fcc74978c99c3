// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_80" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-recompute-backward --convert-fa-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=LOWER
// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_80 deterministic" --canonicalize --cse | FileCheck %s --check-prefix=DET
// RUN: rm -rf %t && fa-compile --bwd --target=sm_80 -d 64 --bwd-block-m 64 --bwd-block-n 128 -o %t && FileCheck %s --check-prefix=TUNED < %t/fa_bwd_sm80_bf16_d64_none.json

// The sm_80 backward's 64 x 128 tile on 8 warps at D = 64 (as at D = 128,
// backward-sm80-split.mlir; the tuned D64 tile is 128 x 128:
// backward-sm80-wide-d64.mlir). S's (P's, dP's, dS's)
// 128 keys go over four groups of two warps, 32 rows x 32 keys a warp.
// dQ_i = dS·K_j reads dS from shared memory and so takes a layout of its
// own (BackwardColumnGroups::gradQuery): D's 64 columns over two groups
// of four warps, 32 each (a quarter, 16, is no swizzle span), whose K
// columns ldmatrix.trans reads with the group's 32 XORed into the
// swizzled column (WarpMma::ldmatrix); each group adds its part from the
// fragment, in dq_acc's MMA-block order.
// dK_j's and dV_j's head dims are split over two groups too (32 each,
// also XORed in), each warp 32 keys (column_groups).
// CHECK-LABEL: gpu.func @grad_main(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: fa.qk_scores {{.*}} -> tensor<64x128xf32, #fa.fragment<warps = 8, mTiles = 2, deferredScale = 1.250000e-01 : f32, columnGroups = 4>>
// CHECK: gpu.barrier
// dK_j and dV_j: each warp 32 keys of its group's 32 head dims.
// CHECK: fa.matmul {{.*}} {transpose_a} {{.*}} tensor<128x64xf32, #fa.fragment<warps = 8, mTiles = 2, columnGroups = 2>>
// CHECK: %[[DQ:.+]] = fa.matmul %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x128xbf16, #fa.shared<rowElements = 128>>, tensor<128x64xbf16, #fa.shared<rowElements = 64>>, tensor<64x64xf32, [[SPLIT:#fa.fragment<warps = 8, mTiles = 1, columnGroups = 2>]]>
// CHECK-NOT: gpu.barrier
// CHECK: fa.accumulate_fragment %[[DQ]], {{.*}} mma_blocks : tensor<64x64xf32, [[SPLIT]]>

// Lowered: per warp and Q block, S and dP on its 32 rows and its group's
// 32 keys (2 × 32 m16n8k16), then dV and dK on its 32 keys and 32 head dims (2 × 32) and dQ_i on its
// group's 32 head dims over all 128 keys (32), then added: 2 row slots of
// 4 n-tiles' 8 registers.
// LOWER-LABEL: gpu.func @grad_main
// LOWER-COUNT-64: nvvm.mma.sync
// LOWER: gpu.barrier
// LOWER-COUNT-96: nvvm.mma.sync
// LOWER-NOT: nvvm.mma.sync
// LOWER-COUNT-16: red.global.add.f32
// LOWER-NOT: red.global.add.f32
// LOWER-NOT: fa.
// LOWER: gpu.return

// The deterministic kernel keeps S's keys over two groups and dQ_i in S's
// layout (with four groups it ran 8% slower).
// DET-LABEL: gpu.func @grad_main(
// DET: fa.qk_scores {{.*}} -> tensor<64x128xf32, #fa.fragment<warps = 8, mTiles = 1, deferredScale = 1.250000e-01 : f32, columnGroups = 2>>
// DET: fa.accumulate_fragment {{.*}} mma_blocks : tensor<64x64xf32, #fa.fragment<warps = 8, mTiles = 1, columnGroups = 2>>

// TUNED: "tile": {"block_m": 64, "block_n": 128, "stages": 2, "warps": 8}
// TUNED: "dynamic_shared_memory": 98304

func.func @grad(%q: tensor<1x4x96x64xbf16>, %k: tensor<1x2x160x64xbf16>, %v: tensor<1x2x160x64xbf16>,
                %o: tensor<1x4x96x64xbf16>, %do: tensor<1x4x96x64xbf16>, %lse: tensor<1x4x96xf32>)
    -> (tensor<1x4x96x64xbf16>, tensor<1x2x160x64xbf16>, tensor<1x2x160x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>, tile = #fa.tile<block_m = 64, block_n = 128, stages = 2, warps = 8>}
      : (tensor<1x4x96x64xbf16>, tensor<1x2x160x64xbf16>, tensor<1x2x160x64xbf16>,
         tensor<1x4x96x64xbf16>, tensor<1x4x96x64xbf16>, tensor<1x4x96xf32>)
      -> (tensor<1x4x96x64xbf16>, tensor<1x2x160x64xbf16>, tensor<1x2x160x64xbf16>)
  return %dq, %dk, %dv : tensor<1x4x96x64xbf16>, tensor<1x2x160x64xbf16>, tensor<1x2x160x64xbf16>
}
