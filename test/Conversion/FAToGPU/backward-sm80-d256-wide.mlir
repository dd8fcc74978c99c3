// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_80 shared-memory-budget=227" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-recompute-backward --convert-fa-to-gpu="chip=sm_80 shared-memory-budget=227" | FileCheck %s --check-prefix=LOWER
// RUN: not fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: not fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_80 shared-memory-budget=228" 2>&1 | FileCheck %s --check-prefix=PAST
// RUN: rm -rf %t && fa-compile --bwd --target=sm_80 -d 256 --shared-memory-budget 227 -o %t && FileCheck %s --check-prefix=TUNED < %t/fa_bwd_sm80_bf16_d256_none.json
// RUN: grep -c "cp.async.cg.shared.global" %t/fa_bwd_sm80_bf16_d256_none.ptx | FileCheck %s --check-prefix=COPIES
// RUN: grep -c "cp.async.cg.shared.global \[[^]]*\], \[[^]]*\], 16;" %t/fa_bwd_sm80_bf16_d256_none.ptx | FileCheck %s --check-prefix=UNCHECKED
// RUN: FileCheck %s --check-prefix=FWDBUDGET < %t/fa_fwd_sm80_bf16_d256_none.json
// RUN: rm -rf %t && fa-compile --bwd --target=sm_80 -d 256 --shared-memory-budget 208 -o %t && FileCheck %s --check-prefix=EXACT < %t/fa_bwd_sm80_bf16_d256_none.json
// RUN: rm -rf %t && fa-compile --bwd --target=sm_80 -d 256 --dv 128 --shared-memory-budget 227 -o %t && FileCheck %s --check-prefix=NARROW128 < %t/fa_bwd_sm80_bf16_d256_dv128_none.json
// RUN: rm -rf %t && fa-compile --bwd --deterministic --target=sm_80 -d 256 --shared-memory-budget 227 -o %t && FileCheck %s --check-prefix=DET < %t/fa_bwd_sm80_bf16_d256_none_det.json
// RUN: rm -rf %t && fa-compile --bwd --deterministic --target=sm_80 -d 256 -o %t && FileCheck %s --check-prefix=DETNARROW < %t/fa_bwd_sm80_bf16_d256_none_det.json
// RUN: rm -rf %t && fa-compile --bwd --target=sm_80 -d 256 --shared-memory-budget 207 -o %t && FileCheck %s --check-prefix=NARROW < %t/fa_bwd_sm80_bf16_d256_none.json
// RUN: %expect-exit 2 fa-compile --bwd --target=sm_80 -d 256 --bwd-block-m 64 -o %t 2>&1 | FileCheck %s --check-prefix=REFUSED

// The sm_80 backward at D = 256 on 64 x 64 (FA2's tile on the H100): two
// Q/dO stages take 208 KB, past an A100's 163 (sm_80's default budget),
// so it is built only for a larger --shared-memory-budget. S's (P's, dP's,
// dS's) 64 rows go over four row warps and its 64 keys over two groups:
// 16 x 32 a warp; dK_j and dV_j 32 keys x 64 columns a warp, dQ_i 32 rows
// x 64 columns. LSE_i and D_i are loaded a Q block ahead, predicated, and
// carried by the Q-block loop (beside dK_j and dV_j): the loads of block
// 0 before the loop, those of block i + 1 in step i after its barrier.
// CHECK-LABEL: gpu.func @grad_main(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[LSE0:.+]] = fa.load_fragment %{{.*}} padding 0x7F800000 predicated : memref<?xf32> -> tensor<64xf32, [[ROWS:#fa.fragment<warps = 8, mTiles = 1, columnGroups = 2>]]>
// CHECK: %[[D0:.+]] = fa.load_fragment %{{.*}} padding 0.000000e+00 predicated : memref<?xf32> -> tensor<64xf32, [[ROWS]]>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[LSE:[^ ]+]] = %[[LSE0]], %[[D:[^ ]+]] = %[[D0]])
// CHECK: fa.qk_scores {{.*}} -> tensor<64x64xf32, #fa.fragment<warps = 8, mTiles = 1, deferredScale = 6.250000e-02 : f32, columnGroups = 2>>
// CHECK: fa.exp_shifted %{{.*}}, %[[LSE]] :
// CHECK: fa.softmax_grad %{{.*}}, %{{.*}}, %[[D]] :
// CHECK: gpu.barrier
// CHECK: %[[LSENEXT:.+]] = fa.load_fragment {{.*}} predicated
// CHECK: %[[DNEXT:.+]] = fa.load_fragment {{.*}} predicated
// CHECK: fa.matmul {{.*}} {transpose_a} {{.*}} tensor<64x256xf32, #fa.fragment<warps = 8, mTiles = 2, columnGroups = 4>>
// CHECK: fa.matmul {{.*}} {transpose_a} {{.*}} tensor<64x256xf32, #fa.fragment<warps = 8, mTiles = 2, columnGroups = 4>>
// CHECK: %[[DQ:.+]] = fa.matmul %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64xbf16, #fa.shared<rowElements = 64>>, tensor<64x256xbf16, #fa.shared<rowElements = 256>>, tensor<64x256xf32, [[DQL:#fa.fragment<warps = 8, mTiles = 2, columnGroups = 4>]]>
// CHECK: fa.accumulate_fragment %[[DQ]], {{.*}} mma_blocks : tensor<64x256xf32, [[DQL]]>
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[LSENEXT]], %[[DNEXT]]

// Lowered: the row values as predicated loads into the padding's
// register (no select after the load; LSE and D, two row slots each); per warp and Q block S and dP on
// 16 rows x 32 keys (2 × 64 m16n8k16), dV and dK at 32 x 64 over 64
// queries (2 × 64), dQ_i at 32 x 64 over 64 keys (64), then dQ_i added: 2
// m-tiles × 2 row slots × 8 n-tiles × 2 registers.
// LOWER-LABEL: gpu.func @grad_main
// LOWER-COUNT-4: @p ld.global.f32
// LOWER: scf.for
// LOWER-COUNT-128: nvvm.mma.sync
// LOWER: gpu.barrier
// LOWER-COUNT-4: @p ld.global.f32
// LOWER-COUNT-192: nvvm.mma.sync
// LOWER-NOT: nvvm.mma.sync
// LOWER-COUNT-64: red.global.add.f32
// LOWER-NOT: red.global.add.f32
// dK_j, dV_j staged in the Q and dO rings between two barriers
// (stores_gradients_through_shared), then 8 rounds of 16-byte stores each
// (64 rows x 256 columns over 256 threads); no store from the fragments.
// LOWER: gpu.barrier
// LOWER-NOT: vector<4xi32>, !llvm.ptr<1>
// LOWER: gpu.barrier
// LOWER: llvm.getelementptr %{{[^[]+}}[65536] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// LOWER-NEXT: llvm.load %{{[^ ]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// LOWER-NEXT: llvm.inttoptr
// LOWER-NEXT: llvm.store %{{[^,]+}}, %{{[^ ]+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// LOWER-COUNT-7: llvm.getelementptr %{{[^[]+}}[65536] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// LOWER-COUNT-8: llvm.getelementptr %{{[^[]+}}[131072] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// LOWER: llvm.store %{{[^,]+}}, %{{[^ ]+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// LOWER-NOT: vector<4xi32>, !llvm.ptr<1>
// LOWER-NOT: fa.
// LOWER: gpu.return

// Each copy (K_j, V_j once; Q_i and dO_i before the loop and in it) is
// 8 rounds of 256 16-byte chunks, emitted twice: unchecked under a uniform
// branch on the whole tile existing (copies_interior_fast), and checked.
// COPIES: {{^}}96{{$}}
// UNCHECKED: {{^}}48{{$}}

// DEFAULT: the backward tile needs 212992 bytes of shared memory, more than the budget's 166912 bytes (sm_80's default, an A100's opt-in maximum; --shared-memory-budget raises it)
// PAST: the shared-memory budget must be 1 to 227 KB (the largest opt-in maximum of a supported chip; 0: the chip's default), got 228 KB
// TUNED: "tile": {"block_m": 64, "block_n": 64, "stages": 2, "warps": 8}
// TUNED: "shared_memory_budget": 232448
// At exactly its 212992 bytes:
// EXACT: "tile": {"block_m": 64, "block_n": 64, "stages": 2, "warps": 8}
// EXACT: "shared_memory_budget": 212992
// The deterministic kernel too (its dQ order on 64-row Q blocks), and on
// 32 x 64 within the default budget.
// DET: "tile": {"block_m": 64, "block_n": 64, "stages": 2, "warps": 8}
// DET: "deterministic_mode": true
// DETNARROW: "tile": {"block_m": 32, "block_n": 64, "stages": 2, "warps": 8}
// NARROW: "tile": {"block_m": 32, "block_n": 64, "stages": 2, "warps": 8}
// NARROW: "shared_memory_budget": 211968
// The 64 x 64 is tuned only at Dv = 256 (where it was measured): at
// Dv = 128 it would fit 160 KB, the default budget, untimed.
// NARROW128: "tile": {"block_m": 32, "block_n": 64, "stages": 2, "warps": 8}
// FWDBUDGET: "shared_memory_budget": 232448
// REFUSED: fa-compile: fa_bwd_sm80_bf16_d256_none: the backward tile needs 212992 bytes of shared memory, more than the budget's 166912 bytes (sm_80's default, an A100's opt-in maximum; --shared-memory-budget raises it)

func.func @grad(%q: tensor<1x4x200x256xbf16>, %k: tensor<1x2x300x256xbf16>, %v: tensor<1x2x300x256xbf16>,
                %o: tensor<1x4x200x256xbf16>, %do: tensor<1x4x200x256xbf16>, %lse: tensor<1x4x200xf32>)
    -> (tensor<1x4x200x256xbf16>, tensor<1x2x300x256xbf16>, tensor<1x2x300x256xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>, tile = #fa.tile<block_m = 64, block_n = 64, stages = 2, warps = 8>}
      : (tensor<1x4x200x256xbf16>, tensor<1x2x300x256xbf16>, tensor<1x2x300x256xbf16>,
         tensor<1x4x200x256xbf16>, tensor<1x4x200x256xbf16>, tensor<1x4x200xf32>)
      -> (tensor<1x4x200x256xbf16>, tensor<1x2x300x256xbf16>, tensor<1x2x300x256xbf16>)
  return %dq, %dk, %dv : tensor<1x4x200x256xbf16>, tensor<1x2x300x256xbf16>, tensor<1x2x300x256xbf16>
}
