// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_80" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-recompute-backward --convert-fa-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=LOWER
// RUN: rm -rf %t && fa-compile --bwd --target=sm_80 -d 256 -o %t && FileCheck %s --check-prefix=TUNED < %t/fa_bwd_sm80_bf16_d256_none.json

// The sm_80 backward at D = 256: 32 x 64 on 8 warps (two Q/dO stages in
// 136 KB; 64 x 64 would need 208 KB, past an A100's 163). S's (P's, dP's,
// dS's) 32 rows go over two row warps and its 64 keys over four groups:
// 16 x 16 a warp. dK_j and dV_j (64 keys x 256) are 32 keys x 64 columns
// a warp, dQ_i (32 x 256) 16 rows x 64 columns: every group's columns a
// whole swizzle span. dQ_i reads dS from shared memory and is added from
// its fragment in dq_acc's MMA-block order.
// CHECK-LABEL: gpu.func @grad_main(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: fa.qk_scores {{.*}} -> tensor<32x64xf32, #fa.fragment<warps = 8, mTiles = 1, deferredScale = 6.250000e-02 : f32, columnGroups = 4>>
// CHECK: gpu.barrier
// CHECK: fa.matmul {{.*}} {transpose_a} {{.*}} tensor<64x256xf32, #fa.fragment<warps = 8, mTiles = 2, columnGroups = 4>>
// CHECK: fa.matmul {{.*}} {transpose_a} {{.*}} tensor<64x256xf32, #fa.fragment<warps = 8, mTiles = 2, columnGroups = 4>>
// CHECK: %[[DQ:.+]] = fa.matmul %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x64xbf16, #fa.shared<rowElements = 64>>, tensor<64x256xbf16, #fa.shared<rowElements = 256>>, tensor<32x256xf32, [[DQL:#fa.fragment<warps = 8, mTiles = 1, columnGroups = 4>]]>
// CHECK: fa.accumulate_fragment %[[DQ]], {{.*}} mma_blocks : tensor<32x256xf32, [[DQL]]>

// Lowered: per warp and Q block, S and dP on its 16 rows and its group's
// 16 keys (2 × 32 m16n8k16 over D's 16 k-steps), then dV and dK at
// 32 x 64 over 32 queries (2 × 32) and dQ_i at 16 x 64 over 64 keys (32),
// then dQ_i added: 1 m-tile × 2 row slots × 8 n-tiles × 2 registers.
// LOWER-LABEL: gpu.func @grad_main
// LOWER-COUNT-64: nvvm.mma.sync
// LOWER: gpu.barrier
// LOWER-COUNT-96: nvvm.mma.sync
// LOWER-NOT: nvvm.mma.sync
// LOWER-COUNT-32: red.global.add.f32
// LOWER-NOT: red.global.add.f32
// LOWER-NOT: fa.
// LOWER: gpu.return

// TUNED: "tile": {"block_m": 32, "block_n": 64, "stages": 2, "warps": 8}

func.func @grad(%q: tensor<1x4x200x256xbf16>, %k: tensor<1x2x300x256xbf16>, %v: tensor<1x2x300x256xbf16>,
                %o: tensor<1x4x200x256xbf16>, %do: tensor<1x4x200x256xbf16>, %lse: tensor<1x4x200xf32>)
    -> (tensor<1x4x200x256xbf16>, tensor<1x2x300x256xbf16>, tensor<1x2x300x256xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>, tile = #fa.tile<block_m = 32, block_n = 64, stages = 2, warps = 8>}
      : (tensor<1x4x200x256xbf16>, tensor<1x2x300x256xbf16>, tensor<1x2x300x256xbf16>,
         tensor<1x4x200x256xbf16>, tensor<1x4x200x256xbf16>, tensor<1x4x200xf32>)
      -> (tensor<1x4x200x256xbf16>, tensor<1x2x300x256xbf16>, tensor<1x2x300x256xbf16>)
  return %dq, %dk, %dv : tensor<1x4x200x256xbf16>, tensor<1x2x300x256xbf16>, tensor<1x2x300x256xbf16>
}
