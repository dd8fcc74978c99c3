// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s
// RUN: rm -rf %t && fa-compile %s --target sm_90a -o %t > /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/causal_d128.ptx

// The sm_90a schedule (HopperSchedule.cpp) around the same L2 math as
// sm_80: a producer warpgroup copies Q, K and V by TMA into 128-byte
// swizzled panels (#fa.tma_shared) and mbarrier rings; two consumer
// warpgroups (8 MMA warps, one m16 accumulator tile each: wgmma m64nNk16's
// layout) run the cloned loop body.

// The tensor maps come first, as pointers until fa-nvvm-grid-constant-params.
// CHECK-LABEL: gpu.func @causal_d128
// CHECK-SAME: (%[[QMAP:[^:]+]]: !llvm.ptr, %[[KMAP:[^:]+]]: !llvm.ptr, %[[VMAP:[^:]+]]: !llvm.ptr, %{{[^:]+}}: memref<?xbf16>,
// CHECK-SAME: fa.grid_constant_params = array<i64: 0, 1, 2>, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// Q [2 panels][128][64]; K and V [2 stages][2 panels][128][64].
// CHECK: %[[SQ:[^ ]+]] = memref.view {{.*}} to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[SK:[^ ]+]] = memref.view {{.*}} to memref<2x2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[SV:[^ ]+]] = memref.view {{.*}} to memref<2x2x128x64xbf16, #gpu.address_space<workgroup>>
// Thread 0 initialises Q full (1), per stage K full (1), K empty (256
// consumer threads), V full, V empty, then Q empty (256).
// CHECK: scf.if
// CHECK-COUNT-10: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: gpu.barrier
// Masked: persistent over pairs of a head's Q blocks (TileOrder::Paired):
// block b takes pairs b, b + gridDim.x, ... of ceil(T / 2)·Hq·B (T =
// ceil(M / 128)), two tiles each: loop index n is pair b + (n / 2)·gridDim.x,
// member n mod 2, member 0 Q block T - 1 - k and member 1 Q block k, so
// that every pair sees T + 1 KV tiles under the causal mask. An odd T's
// middle pair has a second member past the last Q block: no KV tiles.
// CHECK: %[[T:[^ ]+]] = arith.ceildivui %{{[^,]+}}, %c128 : index
// CHECK: %[[HALF:[^ ]+]] = arith.ceildivui %[[T]], %c2 : index
// CHECK: %[[PAIRS:[^ ]+]] = arith.muli %[[HALF]], %{{[^ ]+}} : index
// CHECK: %[[BLOCK:[^ ]+]] = gpu.block_id x
// CHECK: %[[GRID:[^ ]+]] = gpu.grid_dim x
// CHECK: %[[LAST:[^ ]+]] = arith.maxui %[[PAIRS]], %[[BLOCK]] : index
// CHECK: %[[LEFT:[^ ]+]] = arith.subi %[[LAST]], %[[BLOCK]] : index
// CHECK: %[[MINE:[^ ]+]] = arith.ceildivui %[[LEFT]], %[[GRID]] : index
// CHECK: %[[COUNT:[^ ]+]] = arith.muli %[[MINE]], %c2 : index
// Producer: lower its registers, one thread issues Q (once the consumers
// released the last one; a fresh barrier passes) then the K/V ring.
// CHECK: %[[PRODUCER:[^ ]+]] = arith.cmpi uge, %{{.*}}, %c256 : index
// CHECK: scf.if %[[PRODUCER]] {
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// CHECK: scf.for %[[N:[^ ]+]] = %c0 to %[[COUNT]] step %c1 iter_args(
// CHECK: %[[HALFN:[^ ]+]] = arith.divui %[[N]], %c2 : index
// CHECK: %[[STRIDE:[^ ]+]] = arith.muli %[[HALFN]], %[[GRID]] : index
// CHECK: arith.addi %[[BLOCK]], %[[STRIDE]] : index
// CHECK: arith.remui %[[N]], %c2 : index
// CHECK: arith.select
// CHECK: %[[HASROWS:[^ ]+]] = arith.cmpi ult, %{{[^,]+}}, %{{[^ ]+}} : index
// CHECK: arith.select %[[HASROWS]], %{{[^,]+}}, %c0 : index
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{[^,]+}}, %c32768_i32 : !llvm.ptr<3>, i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{[^,]+}}, %[[QMAP]], %{{[^,]+}}, box[%c{{0|64}}_i32,
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{[^,]+}}, %[[KMAP]],
// CHECK: nvvm.mbarrier.try_wait
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{[^,]+}}, %[[VMAP]],
// Consumers: raise their registers; per tile wait for Q, then the L2 math
// software-pipelined (DistributedMath::emitPipelinedBody): tile 0's S and
// softmax peeled; per later tile S_j and the previous P·V issued together
// in this warpgroup's pingpong turn (bar.sync on its named barrier, then
// bar.arrive on the next's), S_j waited with the P·V still in flight
// (fa.mma_wait pending = 1), the softmax under it, then the P·V waited
// before the rescale; the last P·V after the loop.
// CHECK: } else {
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// The last warpgroup gives warpgroup 0 the first turn, before the tiles.
// CHECK: nvvm.barrier.arrive id = %{{[^ ]+}} number_of_threads = %c256_i32
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[QT:[^ ]+]] = fa.shared_tile %[[SQ]] : {{.*}} -> tensor<128x128xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: %[[FIRST:[^:]+]]:4 = scf.if
// CHECK: nvvm.barrier id = %{{[^ ]+}} number_of_threads = %c256_i32
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[S0:[^ ]+]] = fa.qk_scores %[[QT]], %{{[^ ]+}} {{.*}} -> tensor<128x128xf32, #fa.fragment<warps = 8, mTiles = 1, deferredScale
// CHECK: nvvm.barrier.arrive id = %{{[^ ]+}} number_of_threads = %c256_i32
// CHECK: fa.mma_wait %[[S0]] pending = 0
// CHECK: nvvm.mbarrier.arrive %
// CHECK: scf.yield
// CHECK: } else {
// The tiles every query of the Q tile sees fully (buildUnmaskedKeyRange)
// run in a loop of their own without fa.apply_mask (whose branch between
// the wgmmas' issue and their wait makes ptxas wait for P·V early); the
// causal diagonal's tiles follow in a second loop, with the mask.
// CHECK: %[[SPLIT:[^ ]+]] = arith.floordivsi
// CHECK: %[[INTERIOR:[^:]+]]:4 = scf.for %{{[^ ]+}} = %c1 to %[[END:[^ ]+]] step %c1 iter_args({{.*}}, %[[ACC:[^ ]+]] = %[[FIRST]]#2, %[[P:[^ ]+]] = %[[FIRST]]#3)
// CHECK: nvvm.barrier id = %{{[^ ]+}} number_of_threads = %c256_i32
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[KT:[^ ]+]] = fa.shared_tile %[[SK]][%{{[^]]+}}] : {{.*}} -> tensor<128x128xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: %[[S:[^ ]+]] = fa.qk_scores %[[QT]], %[[KT]]
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[VT:[^ ]+]] = fa.shared_tile %[[SV]][%{{[^]]+}}]
// CHECK: %[[PV:[^ ]+]] = fa.matmul %[[P]], %[[VT]], %[[ACC]] : tensor<128x128xbf16, #fa.fragment<warps = 8, mTiles = 1>>, tensor<128x128xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: nvvm.barrier.arrive id = %{{[^ ]+}} number_of_threads = %c256_i32
// CHECK: %[[SW:[^ ]+]] = fa.mma_wait %[[S]] pending = 1
// CHECK: nvvm.mbarrier.arrive %
// CHECK-NOT: fa.apply_mask
// CHECK: fa.row_max %[[SW]]
// CHECK: %[[DONE:[^ ]+]] = fa.mma_wait %[[PV]] pending = 0
// CHECK: nvvm.mbarrier.arrive %
// CHECK: fa.scale_rows %[[DONE]]
// CHECK: scf.yield
// CHECK: %[[LAST:[^:]+]]:4 = scf.for %{{[^ ]+}} = %[[END]] to %{{[^ ]+}} step %c1 iter_args(%{{[^ ]+}} = %[[INTERIOR]]#0, %{{[^ ]+}} = %[[INTERIOR]]#1, %[[ACC2:[^ ]+]] = %[[INTERIOR]]#2, %[[P2:[^ ]+]] = %[[INTERIOR]]#3)
// CHECK: %[[S2:[^ ]+]] = fa.qk_scores %[[QT]]
// CHECK: %[[PV2:[^ ]+]] = fa.matmul %[[P2]], %{{[^ ]+}}, %[[ACC2]]
// CHECK: fa.mma_wait %[[S2]] pending = 1
// CHECK: fa.apply_mask
// CHECK: fa.row_max
// CHECK: %[[DONE2:[^ ]+]] = fa.mma_wait %[[PV2]] pending = 0
// CHECK: fa.scale_rows %[[DONE2]]
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: fa.matmul %[[LAST]]#3, %{{[^ ]+}}, %[[LAST]]#2
// CHECK: fa.mma_wait %{{[^ ]+}} pending = 0
// Q released (its last S waited for), then the epilogue, under the
// producer's next Q and K.
// CHECK: nvvm.mbarrier.arrive %
// CHECK: fa.store_fragment
// CHECK: fa.store_fragment
// After the tiles warpgroup 0 takes the last warpgroup's last arrival.
// CHECK: scf.if
// CHECK-NEXT: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32

// The kernel text has by-value grid-constant tensor maps, the launch bounds setmaxnreg
// needs, TMA, mbarrier waits, wgmma (S from two descriptors; PV with P's
// registers as A and V N-major: imm-trans-b = 1), fence/commit/wait.
// PTX: .target sm_90a
// PTX: .param .align 64 .b8 causal_d128_param_0[128],
// PTX-NEXT: .param .align 64 .b8 causal_d128_param_1[128],
// PTX-NEXT: .param .align 64 .b8 causal_d128_param_2[128],
// PTX: .maxntid 384, 1, 1
// PTX-NEXT: .minnctapersm 1
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 240;
// PTX-DAG: cvta.param.u64
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[{]}}%{{[rf]}}{{[0-9]+}}, {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, accumulate, 1, 1, 0, 0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[{]}}%{{[rf]}}{{[0-9]+}}, {{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, accumulate, 1, 1, 1;
// A k step's offset into its operands is added inside the wgmma's PTX (in
// 16-byte units), so that no per-step descriptor is hoisted out of a loop:
// PTX-DAG: add.s64 descA, %rd{{[0-9]+}}, 2;
// PTX-DAG: add.s64 descB, %rd{{[0-9]+}}, 2;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[{]}}%{{[rf]}}{{[0-9]+}}, {{.*}}}, descA, descB, accumulate, 1, 1, 0, 0;
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned 0;
// PTX-DAG: wgmma.wait_group.sync.aligned 1;
// PTX-DAG: bar.sync {{.*}}%r{{[0-9]+}}, 256;
// PTX-DAG: bar.arrive %r{{[0-9]+}}, 256;
// Eight k16 steps for each of S (D = 128) and PV (block_n = 128), three
// times each: S in the peeled first tile and the two loops (unmasked
// tiles, then the diagonal's), PV in the two loops and after.
// RUN: grep -c "wgmma.mma_async.*accumulate, 1, 1, 0, 0;" %t/causal_d128.ptx | FileCheck %s --check-prefix=STEPS
// RUN: grep -c "wgmma.mma_async.*accumulate, 1, 1, 1;" %t/causal_d128.ptx | FileCheck %s --check-prefix=STEPS
// STEPS: {{^}}24{{$}}
func.func @causal_d128(%q: tensor<1x1x256x128xbf16>, %k: tensor<1x1x256x128xbf16>, %v: tensor<1x1x256x128xbf16>)
    -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {mask = #fa.mask<causal>,
       tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8>}
      : (tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>)
      -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>)
  return %o, %lse : tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>
}
