// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_80" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-recompute-backward --convert-fa-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=LOWER
// RUN: rm -rf %t && fa-compile --bwd --target=sm_80 -d 128 -o %t && FileCheck %s --check-prefix=D128 < %t/fa_bwd_sm80_bf16_d128_none.json
// RUN: rm -rf %t && fa-compile --bwd --target=sm_80 -d 96 --bwd-block-m=64 --bwd-block-n=128 -o %t && FileCheck %s --check-prefix=D96 < %t/fa_bwd_sm80_bf16_d96_none.json
// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_80 deterministic" --canonicalize --cse | FileCheck %s --check-prefix=DET
// RUN: sed 's/block_n = 128/block_n = 64/' %s | not fa-opt --fa-recompute-backward --fa-gpu-distribute="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=BADTILE

// The sm_80 backward's 64 x 128 tile on 8 warps (FA2's 2-D warp layout at
// D = 128): dK_j's and dV_j's head dims are split over two groups of four
// warps, each warp 32 keys (two m-tiles) of its group's 64 head dims;
// S's (and P's, dP's, dS's) 128 keys are split over four groups of two
// warps (#fa.fragment columnGroups = 4), each warp 32 keys of 32 query
// rows (two m-tiles). dQ_i = dS·K_j needs every key: it reads dS from
// shared memory after the body's barrier, each group 32 of D's columns
// (K's columns of its group), each warp 32 rows of them, and is added
// into dq_acc from the fragment.
// CHECK-LABEL: gpu.func @grad_main(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// LSE_i and D_i a Q block ahead (block 0's before the loop), carried.
// CHECK: fa.load_fragment {{.*}} predicated : memref<?xf32> -> tensor<64xf32, [[SPLIT:#fa.fragment<warps = 8, mTiles = 2, columnGroups = 4>]]>
// CHECK: fa.load_fragment {{.*}} predicated : memref<?xf32> -> tensor<64xf32, [[SPLIT]]>
// CHECK: scf.for
// CHECK: %[[Q:.+]] = fa.shared_tile %{{.*}}[%{{.*}}] : memref<2x64x128xbf16, #gpu.address_space<workgroup>> -> tensor<64x128xbf16, #fa.shared<rowElements = 128>>
// CHECK: %[[K:.+]] = fa.shared_tile %{{.*}} : memref<128x128xbf16, #gpu.address_space<workgroup>> -> tensor<128x128xbf16, #fa.shared<rowElements = 128>>
// S is held as q·k (deferredScale: the scale folds into the exponent's
// FFMA) through the mask.
// CHECK: fa.qk_scores %[[Q]], %[[K]] {{.*}} -> tensor<64x128xf32, [[HELD:#fa.fragment<warps = 8, mTiles = 2, deferredScale = 0.0883883461 : f32, columnGroups = 4>]]>
// CHECK: fa.apply_mask {{.*}} : tensor<64x128xf32, [[HELD]]>
// CHECK: fa.store_shared %{{.*}}, %{{.*}} : tensor<64x128xbf16, [[SPLIT]]>, memref<64x128xbf16, #gpu.address_space<workgroup>>
// CHECK: fa.store_shared %{{.*}}, %[[DSBUF:.+]] : tensor<64x128xbf16, [[SPLIT]]>, memref<64x128xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[DS:.+]] = fa.shared_tile %[[DSBUF]]
// CHECK: gpu.barrier
// CHECK: fa.matmul {{.*}} {transpose_a} {{.*}} tensor<128x128xf32, [[KEYS:#fa.fragment<warps = 8, mTiles = 2, columnGroups = 2>]]>
// CHECK: fa.matmul %[[DS]], %[[Q]], %{{.*}} {transpose_a} {{.*}} tensor<128x128xf32, [[KEYS]]>
// CHECK: %[[DQ:.+]] = fa.matmul %[[DS]], %[[K]], %{{.*}} : tensor<64x128xbf16, #fa.shared<rowElements = 128>>, tensor<128x128xbf16, #fa.shared<rowElements = 128>>, tensor<64x128xf32, [[SPLIT]]>
// CHECK-NOT: gpu.barrier
// CHECK: fa.accumulate_fragment %[[DQ]], {{.*}} mma_blocks
// CHECK: fa.store_fragment {{.*}} : tensor<128x128xbf16, [[KEYS]]>

// Lowered: per warp and Q block, S and dP on its 32 rows and its group's
// 32 keys (2 × 64 m16n8k16), dV and dK on its 32 keys and 64 head dims
// (2 × 64) and dQ_i on its 32 rows and its group's 32 head dims over all
// 128 keys (64), 32 reductions (red.global.add.f32: four row slots of
// 8, one address each); no fa op left. LSE_i and D_i a Q block ahead
// (loads_query_rows_ahead), 4 row slots a thread each (2 m-tiles × 2 halves),
// predicated at immediate offsets (8 and 16 rows: 32 bytes a slot): block
// 0's before the loop, block i + 1's in step i after its barrier; the
// copies and the dK / dV stores as before (copies_interior_fast and
// stores_gradients_through_shared off).
// LOWER-LABEL: gpu.func @grad_main
// LOWER-COUNT-8: @p ld.global.f32 $0, [$1+{{0|32|64|96}}];
// LOWER-NOT: ld.global.f32
// LOWER: scf.for
// LOWER-COUNT-128: nvvm.mma.sync
// LOWER: gpu.barrier
// LOWER-COUNT-8: @p ld.global.f32 $0, [$1+{{0|32|64|96}}];
// LOWER-NOT: ld.global.f32
// LOWER-COUNT-192: nvvm.mma.sync
// LOWER: llvm.inline_asm has_side_effects "red.global.add.f32 [$0], $1;", "l,f"
// LOWER-COUNT-7: llvm.inline_asm has_side_effects "red.global.add.f32 [$0+{{[0-9]+}}], $1;", "l,f"
// LOWER: llvm.inline_asm has_side_effects "red.global.add.f32 [$0], $1;", "l,f"
// LOWER-COUNT-7: llvm.inline_asm has_side_effects "red.global.add.f32 [$0+{{[0-9]+}}], $1;", "l,f"
// LOWER: llvm.inline_asm has_side_effects "red.global.add.f32 [$0], $1;", "l,f"
// LOWER-COUNT-7: llvm.inline_asm has_side_effects "red.global.add.f32 [$0+{{[0-9]+}}], $1;", "l,f"
// LOWER: llvm.inline_asm has_side_effects "red.global.add.f32 [$0], $1;", "l,f"
// LOWER-COUNT-7: llvm.inline_asm has_side_effects "red.global.add.f32 [$0+{{[0-9]+}}], $1;", "l,f"
// LOWER-NOT: red.global.add.f32
// LOWER-NOT: st.global.v4
// LOWER-NOT: fa.
// LOWER: gpu.return

// The deterministic kernel keeps S's keys over two groups (16 query rows
// a warp), whose turns four groups slow (the column_groups knob).
// DET-LABEL: gpu.func @grad_main(
// DET: fa.qk_scores {{.*}} -> tensor<64x128xf32, #fa.fragment<warps = 8, mTiles = 1, deferredScale = 0.0883883461 : f32, columnGroups = 2>>
// DET: fa.accumulate_fragment {{.*}} mma_blocks : tensor<64x128xf32, #fa.fragment<warps = 8, mTiles = 1, columnGroups = 2>>

// fa-compile's tuned D = 128 tile is this one (and D = 64's:
// backward-sm80-split-d64.mlir); other head dims keep 4 warps on any tile
// (64 x 128 at D = 96: 32 key rows per warp).
// D128: "tile": {"block_m": 64, "block_n": 128, "stages": 2, "warps": 8}
// D96: "tile": {"block_m": 64, "block_n": 128, "stages": 2, "warps": 4}

// BADTILE: error: sm_80: the sm_80 backward needs block_m and block_n multiples of 128 (16 rows per warp), or 64 x 128 on 8 warps, got 64 x 64 (8 warps)

func.func @grad(%q: tensor<1x4x96x128xbf16>, %k: tensor<1x2x160x128xbf16>, %v: tensor<1x2x160x128xbf16>,
                %o: tensor<1x4x96x128xbf16>, %do: tensor<1x4x96x128xbf16>, %lse: tensor<1x4x96xf32>)
    -> (tensor<1x4x96x128xbf16>, tensor<1x2x160x128xbf16>, tensor<1x2x160x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>, tile = #fa.tile<block_m = 64, block_n = 128, stages = 2, warps = 8>}
      : (tensor<1x4x96x128xbf16>, tensor<1x2x160x128xbf16>, tensor<1x2x160x128xbf16>,
         tensor<1x4x96x128xbf16>, tensor<1x4x96x128xbf16>, tensor<1x4x96xf32>)
      -> (tensor<1x4x96x128xbf16>, tensor<1x2x160x128xbf16>, tensor<1x2x160x128xbf16>)
  return %dq, %dk, %dv : tensor<1x4x96x128xbf16>, tensor<1x2x160x128xbf16>, tensor<1x2x160x128xbf16>
}
