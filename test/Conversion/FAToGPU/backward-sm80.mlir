// RUN: fa-opt %s --fa-recompute-backward="block-m=64 block-n=64" --fa-gpu-distribute="chip=sm_80" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-recompute-backward="block-m=64 block-n=64" --convert-fa-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=LOWER
// RUN: fa-opt %s --fa-recompute-backward="block-m=64 block-n=64 test-omit-row-dot" --fa-gpu-distribute="chip=sm_80" --canonicalize --cse | FileCheck %s --check-prefix=NOROWDOT
// RUN: fa-opt %s --fa-recompute-backward="block-m=64 block-n=64" --fa-gpu-distribute="chip=sm_80 deterministic" --canonicalize --cse | FileCheck %s --check-prefix=DET

// The backward's GPU lowering (BackwardKernel.h): fa-recompute-backward's
// nest (GQA 4 / 2 heads, causal, M = 96 and N = 80: partial last blocks)
// becomes three kernels. Their math is the L2 ops, with layouts.

// 1. D = rowsum(dO ∘ O): fa.row_dot on 128-row tiles read by fa.load_fragment.
// CHECK-LABEL: gpu.func @grad_preprocess
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[DO:.+]] = fa.load_fragment %{{.*}} stride %{{.*}} padding 0.000000e+00 : memref<?xbf16> -> tensor<128x64xbf16, [[EDGE:#fa.fragment<warps = 8, mTiles = 1>]]>
// CHECK: %[[O:.+]] = fa.load_fragment %{{.*}} : memref<?xbf16> -> tensor<128x64xbf16, [[EDGE]]>
// CHECK: %[[D:.+]] = fa.row_dot %[[DO]], %[[O]]
// CHECK: fa.store_fragment %[[D]]

// 3. dQ = the f32 accumulator (in the main kernel's MMA-block order)
// times α (the scale dK's and dQ's matmuls share, which the main kernel
// leaves out of every dS: deferredGradientScale) in the input type.
// CHECK-LABEL: gpu.func @grad_postprocess
// CHECK: %[[ACC:.+]] = fa.load_fragment %{{.*}} mma_blocks : memref<?xf32> -> tensor<128x64xf32, [[EDGE2:#fa.fragment<warps = 8, mTiles = 1>]]>
// CHECK: %[[ACCA:.+]] = arith.mulf %[[ACC]], %{{.*}} : tensor<128x64xf32, [[EDGE2]]>
// CHECK: %[[DQ:.+]] = arith.truncf %[[ACCA]]
// CHECK: fa.store_fragment %[[DQ]]

// 2. KV blocks outer: one thread block per (KV block, KV head, batch).
// CHECK-LABEL: gpu.func @grad_main
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: %[[KVB:.+]] = gpu.block_id  x
// K_j and V_j copied once, before the loops: nvvm.cp.async on a 32-bit
// shared address (as a pointer), each tile's shift in the shared memory
// (K_j 0, V_j 8192) and its rounds (2048 bytes apart) a constant GEP (the
// immediate).
// CHECK: %[[SMEM:.+]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [65536], strides: [1]
// CHECK-NEXT: memref.view %[[SMEM]][%c0][] : memref<65536xi8, #gpu.address_space<workgroup>> to memref<64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: memref.view %[[SMEM]][%c8192][] : memref<65536xi8, #gpu.address_space<workgroup>> to memref<64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: memref.view %[[SMEM]][%c16384][] : memref<65536xi8, #gpu.address_space<workgroup>> to memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: memref.view %[[SMEM]][%c32768][] : memref<65536xi8, #gpu.address_space<workgroup>> to memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[KVPTR:[^ ]+]] = llvm.inttoptr %{{[^ ]+}} : i32 to !llvm.ptr<3>
// CHECK-NEXT: nvvm.cp.async.shared.global %[[KVPTR]], %{{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: llvm.getelementptr %[[KVPTR]][2048]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK: llvm.getelementptr %[[KVPTR]][4096]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK: llvm.getelementptr %[[KVPTR]][6144]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK: llvm.getelementptr %[[KVPTR]][8192]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK: llvm.getelementptr %[[KVPTR]][10240]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK: llvm.getelementptr %[[KVPTR]][12288]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK: llvm.getelementptr %[[KVPTR]][14336]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK-NEXT: nvvm.cp.async.commit.group
// The group's query heads, then the Q blocks that see K_j (causal: from
// the first query on its diagonal).
// CHECK: scf.for %{{.*}} iter_args(%[[DK0:.+]] = %{{.*}}, %[[DV0:.+]] = %{{.*}}) -> (tensor<64x64xf32, [[ROWS:#fa.fragment<warps = 4, mTiles = 1>]]>, tensor<64x64xf32, [[ROWS]]>)
// Each head's first Q-block copy waits until every warp is past the last
// head's reads of stage 0 (racecheck found this one under GQA).
// CHECK: gpu.barrier
// CHECK-NEXT: scf.if
// CHECK: llvm.getelementptr %{{[^[]+}}[16384]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK: llvm.getelementptr %{{[^[]+}}[32768]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for %{{.*}} iter_args(%[[DK:.+]] = %[[DK0]], %[[DV:.+]] = %[[DV0]])
// Wait for Q_i, dO_i; then prefetch the next Q block into the other stage.
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// S, recomputed from shared Q_i and K_j; P = exp(S - LSE) with LSE's rows
// past M +inf (their P is 0).
// CHECK: %[[QI:.+]] = fa.shared_tile %{{.*}}[%{{.*}}] : memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[KJ:.+]] = fa.shared_tile %{{.*}} : memref<64x64xbf16, #gpu.address_space<workgroup>>
// S is held as q·k (its layout's deferredScale): the scale folds into the
// exponent's FFMA below.
// CHECK: %[[S:.+]] = fa.qk_scores %[[QI]], %[[KJ]] {scale = 1.250000e-01 : f32} {{.*}} -> tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1, deferredScale = 1.250000e-01 : f32>>
// CHECK: %[[SM:.+]] = fa.apply_mask %[[S]], <causal>
// CHECK: %[[LSE:.+]] = fa.load_fragment %{{.*}} padding 0x7F800000 : memref<?xf32> -> tensor<64xf32, [[ROWS]]>
// CHECK: %[[P:.+]] = fa.exp_shifted %[[SM]], %[[LSE]]
// P to shared memory (dV += Pᵀ dO_i reads it transposed, below).
// CHECK: %[[P16:.+]] = arith.truncf %[[P]] : tensor<64x64xf32, [[ROWS]]> to tensor<64x64xbf16, [[ROWS]]>
// CHECK: fa.store_shared %[[P16]], %[[SP:[^ ]+]]
// CHECK-NOT: gpu.barrier
// CHECK: %[[PT:.+]] = fa.shared_tile %[[SP]]
// dP = dO_i V_jᵀ; dS = P ∘ (dP - D_i), to shared memory unscaled (the α
// of dK's and dQ's matmuls is applied once, to dK_j at the end and to dQ in
// the postprocess).
// CHECK: %[[DP:.+]] = fa.matmul %[[DOI:[^ ,]+]], %{{.*}} {transpose_b}
// CHECK: %[[DROWS:.+]] = fa.load_fragment %{{.*}} padding 0.000000e+00 : memref<?xf32> -> tensor<64xf32, [[ROWS]]>
// CHECK: %[[DS:.+]] = fa.softmax_grad %[[P]], %[[DP]], %[[DROWS]]
// CHECK-NOT: arith.mulf
// CHECK: %[[DS16:.+]] = arith.truncf %[[DS]]
// CHECK: fa.store_shared %[[DS16]], %[[SDS:[^ ]+]]
// CHECK: %[[DST:.+]] = fa.shared_tile %[[SDS]]
// dQ_i = dS K_j from dS's registers.
// CHECK: %[[DQI:.+]] = fa.matmul %[[DS16]], %[[KJ]], %{{.*}} : tensor<64x64xbf16, [[ROWS]]>
// One barrier; dQ_i added into the accumulator from its fragment, in
// MMA-block order (coalesced); then the matmuls that read P and dS
// transposed.
// CHECK-NEXT: gpu.barrier
// CHECK: fa.accumulate_fragment %[[DQI]], %{{.*}} mma_blocks : tensor<64x64xf32, [[ROWS]]>, memref<?xf32>
// CHECK-NEXT: %[[DVN:.+]] = fa.matmul %[[PT]], %[[DOI]], %[[DV]] {transpose_a}
// CHECK-NEXT: %[[DKN:.+]] = fa.matmul %[[DST]], %[[QI]], %[[DK]] {transpose_a}
// CHECK-NEXT: scf.yield %[[DKN]], %[[DVN]]
// dK_j (times α) and dV_j stored by the rows that exist.
// CHECK: %[[DKA:.+]] = arith.mulf %{{.*}}, %{{.*}} : tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>
// CHECK: arith.truncf %[[DKA]]
// CHECK: fa.store_fragment
// CHECK: arith.truncf
// CHECK: fa.store_fragment

// After fa-gpu-lower-fragments: P = exp(S - LSE) in log2 units, LSE·log2(e)
// once per row and per score q·k·(scale·log2(e)) - LSE·log2(e) (one FFMA) into
// ex2.approx.ftz; P and dS to shared memory as 32-bit llvm.store, one
// 32-bit address per n-tile shared by both, the tile's shift (P 49152, dS
// 57344) and the row slot's (8 rows: 1024 bytes) a constant GEP;
// ldmatrix.trans for Pᵀ, dSᵀ (and dO, Q as B by columns), no fa ops left.
// dQ_i is added from the fragment (mma-blocks.mlir): per row slot one
// 64-bit address, its 8 n-tiles' 16 registers at immediates 128 bytes
// apart.
// LOWER-LABEL: gpu.func @grad_main
// LOWER: %[[C:[^ ]+]] = arith.constant 0.180336878 : f32
// LOWER: %[[LOG2E:[^ ]+]] = arith.constant 1.44269502 : f32
// LOWER: %[[LSE2:[^ ]+]] = arith.mulf %{{.*}}, %[[LOG2E]] : f32
// LOWER: %[[X2:[^ ]+]] = arith.mulf %{{.*}}, %[[C]] fastmath<contract> : f32
// LOWER-NEXT: %[[E:[^ ]+]] = arith.subf %[[X2]], %[[LSE2]] fastmath<contract> : f32
// LOWER-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[E]]) : (f32) -> f32
// LOWER: %[[NT0:[^ ]+]] = llvm.inttoptr %{{[^ ]+}} : i32 to !llvm.ptr<3>
// LOWER-NEXT: %[[P0:[^ ]+]] = llvm.getelementptr %[[NT0]][49152]
// LOWER-NEXT: llvm.store %{{[^,]+}}, %[[P0]] {alignment = 4 : i64} : i32, !llvm.ptr<3>
// LOWER: %[[P1:[^ ]+]] = llvm.getelementptr %[[NT0]][50176]
// LOWER-NEXT: llvm.store %{{[^,]+}}, %[[P1]] {alignment = 4 : i64} : i32, !llvm.ptr<3>
// LOWER: %[[P2:[^ ]+]] = llvm.getelementptr %[[NT0]][57344]
// LOWER-NEXT: llvm.store %{{[^,]+}}, %[[P2]] {alignment = 4 : i64} : i32, !llvm.ptr<3>
// LOWER: %[[P3:[^ ]+]] = llvm.getelementptr %[[NT0]][58368]
// LOWER-NEXT: llvm.store %{{[^,]+}}, %[[P3]] {alignment = 4 : i64} : i32, !llvm.ptr<3>
// LOWER: nvvm.ldmatrix %{{[^ ]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>
// LOWER: nvvm.mma.sync
// LOWER: llvm.inline_asm has_side_effects "red.global.add.f32 [$0], $1;", "l,f" %[[A0:[^ ,]+]],
// LOWER-NEXT: llvm.inline_asm has_side_effects "red.global.add.f32 [$0+128], $1;", "l,f" %[[A0]],
// LOWER-COUNT-14: llvm.inline_asm has_side_effects "red.global.add.f32 [$0+{{[0-9]+}}], $1;", "l,f" %[[A0]],
// LOWER: llvm.inline_asm has_side_effects "red.global.add.f32 [$0], $1;", "l,f" %[[A1:[^ ,]+]],
// LOWER-COUNT-15: llvm.inline_asm has_side_effects "red.global.add.f32 [$0+{{[0-9]+}}], $1;", "l,f" %[[A1]],
// LOWER-NOT: red.global.add.f32
// LOWER-NOT: fa.

// deterministic: when the launch's "deterministic" is set, the KV blocks
// that see a Q block add in a fixed order (BackwardOrder.cpp). At the
// step's start thread 0 reads this Q block's counter in dq_semaphore (a
// relaxed load, a step ahead). After the body's barrier, if that read saw
// the turn come, one acq_rel fence makes it an acquire and releases the
// additions every thread issued before the barrier (cumulative: no
// per-thread fence), and the previous Q block's turn is passed with a
// relaxed increment; else the previous turn is passed with a release
// increment and thread 0 polls (acquire loads). A barrier, then the block
// adds. The last Q block's turn is passed after the loop, behind a barrier.
// DET-LABEL: gpu.func @grad_main
// DET: scf.for
// DET-NOT: nvvm.memory.barrier
// DET: gpu.barrier
// DET: llvm.load %{{[^ ]+}} atomic syncscope("device") monotonic {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// DET: gpu.barrier
// DET: llvm.fence syncscope("device") acq_rel
// DET: llvm.atomicrmw add %{{[^,]+}}, %c1_i32 syncscope("device") monotonic {alignment = 4 : i64} : !llvm.ptr<1>, i32
// DET: } else {
// DET: llvm.inline_asm has_side_effects "red.release.gpu.global.add.u32 [$0], 1;", "l"
// DET: scf.while
// DET-NEXT: llvm.inttoptr
// DET-NEXT: llvm.load %{{[^ ]+}} atomic syncscope("device") acquire {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// DET: gpu.barrier
// DET-NEXT: }
// DET-NEXT: fa.accumulate_fragment
// DET: scf.yield
// DET-NOT: nvvm.memory.barrier
// DET: gpu.barrier
// DET: llvm.inline_asm has_side_effects "red.release.gpu.global.add.u32 [$0], 1;", "l"

// The negative control: the main kernel reads no D, dS = P ∘ dP.
// NOROWDOT-LABEL: gpu.func @grad_main
// NOROWDOT-NOT: padding 0.000000e+00 : memref<?xf32> -> tensor<64xf32
// NOROWDOT: fa.softmax_grad %{{.*}}, %{{.*}}, %cst
func.func @grad(%q: tensor<1x4x96x64xbf16>, %k: tensor<1x2x80x64xbf16>, %v: tensor<1x2x80x64xbf16>,
                %o: tensor<1x4x96x64xbf16>, %do: tensor<1x4x96x64xbf16>, %lse: tensor<1x4x96xf32>)
    -> (tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>}
      : (tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>,
         tensor<1x4x96x64xbf16>, tensor<1x4x96x64xbf16>, tensor<1x4x96xf32>)
      -> (tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>)
  return %dq, %dk, %dv : tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>
}
