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
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.
// CHECK: nvvm.cp.async.bulk.tensor.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvvm.cp.async.bulk.tensor.
// CHECK: nvvm.cp.async.bulk.tensor.

// The dQ writer (a thread of the producer's second warp): per step, waits
// for dQ_i in its staging buffer (dq_full), adds it into dq_acc by TMA
// reduce-add, one per 32-column panel, and releases the buffer (dq_empty)
// once they have read it; its last reduce-adds complete before it ends.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvvm.cp.async.bulk.tensor.reduce
// CHECK: nvvm.cp.async.bulk.tensor.reduce
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.mbarrier.arrive %
// CHECK: nvvm.cp.async.bulk.wait_group 0{{$}}

// The consumers: per step, wait for Q_i and dO_i, one consumer barrier.
// CHECK: nvvm.setmaxregister {{ *}}increase 232
// CHECK: scf.for
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait
// CHECK-NOT: nvvm.cp.async.bulk.wait_group
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32

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
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[STAGING:.+]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : memref<2x64x32xf32, #gpu.address_space<workgroup>>
// CHECK: fa.store_shared %[[DQ]], %[[STAGING]] : tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>, memref<2x64x32xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.mbarrier.arrive %
// P and dS made visible to the async proxy, one barrier.
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id =
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// dV += Pᵀ·dO and dK += dSᵀ·Q in flight together; Q_i, dO_i released after.
// CHECK: %[[DV:.+]] = fa.matmul %[[PT]], %[[DO]], %{{.*}} {transpose_a}
// CHECK: %[[DK:.+]] = fa.matmul %{{.*}}, %[[Q]], %{{.*}} {transpose_a}
// CHECK: fa.mma_wait %[[DV]] pending = 1
// CHECK: fa.mma_wait %[[DK]] pending = 0
// CHECK: nvvm.mbarrier.arrive %
// After the loops: dK_j, dV_j stored.
// CHECK: fa.store_fragment
// CHECK: fa.store_fragment

// After fa-gpu-lower-fragments: fa.wgmma for all five products (the
// transposed reads of P and dS with transpose_a), and fa.wgmma_wait; no
// other fa ops left. S's first k step starts from zeros: no accumulator
// operands (scale-d = 0); the next ones accumulate, their k steps' offsets
// (32 bytes) on the same descriptors.
// LOWER-LABEL: gpu.func @grad_main
// LOWER: %[[S0:.+]]:32 = fa.wgmma a(desc %[[DA:[^ ]+]] + 0) b(desc %[[DB:[^ ]+]] + 0) : bf16 -> f32,
// LOWER-NEXT: fa.wgmma a(desc %[[DA]] + 32) b(desc %[[DB]] + 32) acc(%[[S0]]#0, {{.*}}) : bf16 -> f32,
// LOWER: fa.wgmma a(desc {{.*}} {transpose_a, transpose_b} : bf16 -> f32,
// LOWER: fa.wgmma_wait 0, %{{.*}} : f32,
// No fa op but the instruction ops (fa.wgmma, fa.wgmma_wait) is left.
// LOWER-NOT: fa.{{[a-vx-z]}}
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
