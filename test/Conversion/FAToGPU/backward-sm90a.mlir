// RUN: fa-opt %s --fa-recompute-backward="block-m=64 block-n=64" --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-recompute-backward="block-m=64 block-n=64" --convert-fa-to-gpu="chip=sm_90a" | FileCheck %s --check-prefix=LOWER

// The sm_90a backward's main kernel (HopperBackward.cpp): the same L2 math
// as sm_80's (GQA 4 / 2 heads, causal, M = 96 and N = 80), on the Hopper
// schedule. One consumer warpgroup (64 query rows, 64 key rows) and one
// producer warpgroup; two blocks per SM fit.
// CHECK-LABEL: gpu.func @grad_main(
// CHECK-SAME: fa.grid_constant_params = array<i64: 0, 1, 2, 3, 4>, nvvm.maxntid = array<i32: 256, 1, 1>, nvvm.minctasm = 2 : i32

// The producer: K_j and V_j once, then Q_i and dO_i by TMA into the ring,
// each stage released by the consumers' q_empty.
// CHECK: setmaxnreg.dec.sync.aligned.u32 24;
// CHECK: mbarrier.arrive.expect_tx
// CHECK: cp.async.bulk.tensor.4d
// CHECK: cp.async.bulk.tensor.4d
// CHECK: scf.for
// CHECK: scf.for
// CHECK: mbarrier.try_wait.parity
// CHECK: cp.async.bulk.tensor.4d
// CHECK: cp.async.bulk.tensor.4d

// The dQ writer (a thread of the producer's second warp): per step, waits
// for dQ_i in its staging buffer (dq_full), adds it into dq_acc by TMA
// reduce-add, one per 32-column panel, and releases the buffer (dq_empty)
// once they have read it; its last reduce-adds complete before it ends.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: mbarrier.try_wait.parity
// CHECK: cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group
// CHECK: cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group
// CHECK: cp.async.bulk.commit_group;
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK: mbarrier.arrive.shared::cta.b64
// CHECK: cp.async.bulk.wait_group 0;

// The consumers: per step, wait for Q_i and dO_i, one consumer barrier.
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: scf.for
// CHECK: scf.for
// CHECK: mbarrier.try_wait.parity
// CHECK-NOT: cp.async.bulk.wait_group
// CHECK: "bar.sync $0, $1;", "r,r" %c1_i32, %c128_i32

// S = QKᵀ and dP = dO·Vᵀ issued together (both operands in TMA panels),
// S awaited with dP in flight, dP only before dS needs it.
// CHECK: %[[Q:.+]] = fa.shared_tile %{{.*}}[%{{.*}}] : memref<2x1x64x64xbf16, #gpu.address_space<workgroup>> -> tensor<64x64xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: %[[S:.+]] = fa.qk_scores %[[Q]], %[[K:.+]] {scale
// CHECK: %[[DO:.+]] = fa.shared_tile %{{.*}}[%{{.*}}] : memref<2x1x64x64xbf16
// CHECK: %[[DP:.+]] = fa.matmul %[[DO]], %{{.*}}, %{{.*}} {transpose_b}
// CHECK: %[[SW:.+]] = fa.mma_wait %[[S]] pending = 1
// CHECK: fa.apply_mask %[[SW]], <causal>
// CHECK: %[[P:.+]] = fa.exp_shifted
// P to shared memory as TMA panels, read back transposed by dV's wgmma.
// CHECK: fa.store_shared %{{.*}}, %[[PBUF:.+]] : tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>, memref<1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[PT:.+]] = fa.shared_tile %[[PBUF]]
// CHECK: %[[DPW:.+]] = fa.mma_wait %[[DP]] pending = 0
// CHECK: fa.softmax_grad %[[P]], %[[DPW]]
// dQ_i = dS K_j from dS's registers, staged in f32 panels of 32 columns,
// in the staging buffer of the step (two: the writer may still be adding
// the last one) once the writer has released it; fenced for the async
// proxy and handed over (dq_full, arrived at by every consumer thread).
// CHECK: %[[DQ:.+]] = fa.matmul %{{.*}}, %[[K]], %{{.*}} : tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>, tensor<64x64xbf16, #fa.tma_shared
// CHECK: mbarrier.try_wait.parity
// CHECK: %[[STAGING:.+]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : memref<2x64x32xf32, #gpu.address_space<workgroup>>
// CHECK: fa.store_shared %[[DQ]], %[[STAGING]] : tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>, memref<2x64x32xf32, #gpu.address_space<workgroup>>
// CHECK: fence.proxy.async.shared::cta;
// CHECK: mbarrier.arrive.shared::cta.b64
// P and dS made visible to the async proxy, one barrier.
// CHECK: fence.proxy.async.shared::cta;
// CHECK: "bar.sync $0, $1;"
// CHECK-NOT: cp.reduce
// dV += Pᵀ·dO and dK += dSᵀ·Q in flight together; Q_i, dO_i released after.
// CHECK: %[[DV:.+]] = fa.matmul %[[PT]], %[[DO]], %{{.*}} {transpose_a}
// CHECK: %[[DK:.+]] = fa.matmul %{{.*}}, %[[Q]], %{{.*}} {transpose_a}
// CHECK: fa.mma_wait %[[DV]] pending = 1
// CHECK: fa.mma_wait %[[DK]] pending = 0
// CHECK: mbarrier.arrive.shared::cta.b64
// After the loops: dK_j, dV_j stored.
// CHECK: fa.store_fragment
// CHECK: fa.store_fragment

// After fa-gpu-lower-fragments: wgmma for all five products (the
// transposed reads of P and dS with imm-trans-a), no fa ops left. S's
// first k step starts from zeros: 32 outputs and no tied inputs (its
// descriptors are $32, $33), scale-d from the constant 0.
// LOWER-LABEL: gpu.func @grad_main
// LOWER: %[[NOACC:.+]] = arith.constant 0 : i32
// LOWER: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, $32, $33, accumulate, 1, 1, 0, 0;{{.*}}"=f,{{(=f,)+}}l,l,r" %{{.*}}, %{{.*}}, %[[NOACC]]
// LOWER: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}} descA, descB, accumulate, 1, 1, 0, 0;{{.*}}"=f,{{(=f,)+}}0,1,
// LOWER: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, 1, 1, 1, 1;
// LOWER-NOT: fa.
// LOWER: gpu.return

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
