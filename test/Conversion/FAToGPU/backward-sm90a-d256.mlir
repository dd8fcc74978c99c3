// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-recompute-backward --convert-fa-to-gpu="chip=sm_90a" | FileCheck %s --check-prefix=LOWER
// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_90a deterministic" --canonicalize --cse | FileCheck %s --check-prefix=DET

// The sm_90a backward above D = 128 (64 x 64, 8 warps): one warpgroup
// cannot hold dK_j and dV_j (64 keys x 256 f32 each), so the two consumer
// warpgroups split *both* kinds of fragment's columns (#fa.fragment
// columnGroups = 2): the query-row ones (S, dP on 32 keys each, dQ_i on
// 128 head dims) and the key-row ones (dK_j, dV_j on 128 head dims each).
// CHECK-LABEL: gpu.func @grad_main(
// CHECK-SAME: nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// The producer warpgroup gets 40 registers (it spills at 24), the
// consumers 232: dQ_i in two parts leaves them room.
// CHECK: nvvm.setmaxregister {{ *}}decrease 40
// CHECK: nvvm.setmaxregister {{ *}}increase 232
// The LSE and D rows are loaded before S's and dP's wgmmas issue.
// CHECK: fa.load_fragment {{.*}} padding 0x7F800000 : memref<?xf32> -> tensor<64xf32, [[SPLIT:#fa.fragment<warps = 8, mTiles = 1, columnGroups = 2>]]>
// CHECK: fa.load_fragment {{.*}} padding 0.000000e+00 : memref<?xf32> -> tensor<64xf32, [[SPLIT]]>
// Q_i has two stages and dO_i one, on a ring of its own: dO_i is awaited
// just before dP's wgmma and released once dV's has completed, so that
// dO_(i+1) lands under dK's and the next S's wgmmas (208 KB in all).
// CHECK: %[[Q:.+]] = fa.shared_tile %{{.*}}[%{{.*}}] : memref<2x4x64x64xbf16, #gpu.address_space<workgroup>> -> tensor<64x256xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: %[[K:.+]] = fa.shared_tile %{{.*}} : memref<4x64x64xbf16, #gpu.address_space<workgroup>> -> tensor<64x256xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: fa.qk_scores %[[Q]], %[[K]] {{.*}} -> tensor<64x64xf32, #fa.fragment<warps = 8, mTiles = 1, deferredScale = {{[^,]+}}, columnGroups = 2>>
// CHECK: %[[DO:.+]] = fa.shared_tile %{{.*}}[%{{.*}}] : memref<1x4x64x64xbf16, #gpu.address_space<workgroup>> -> tensor<64x256xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK-NOT: fa.matmul
// CHECK: nvvm.mbarrier.try_wait
// CHECK: fa.matmul %[[DO]], %{{.*}}, %{{.*}} {transpose_b}
// CHECK: fa.store_shared %{{.*}}, %{{.*}} : tensor<64x64xbf16, [[SPLIT]]>, memref<1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: fa.store_shared %{{.*}}, %[[DSBUF:.+]] : tensor<64x64xbf16, [[SPLIT]]>, memref<1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[DS:.+]] = fa.shared_tile %[[DSBUF]]
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// dQ_i = dS·K_j in two parts of 128 columns (K_j's first two panels,
// then its last two), each issued with one of dV and dK in flight and
// staged into the staging buffer (one part's size) once the dQ writer has
// read the part before.
// CHECK: %[[K0:.+]] = fa.shared_tile %{{.*}} : memref<2x64x64xbf16, #gpu.address_space<workgroup>> -> tensor<64x128xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: %[[DQ0:.+]] = fa.matmul %[[DS]], %[[K0]], %{{.*}} : {{.*}}, tensor<64x128xf32, [[SPLIT]]>
// CHECK: %[[DV:.+]] = fa.matmul %{{.*}}, %[[DO]], %{{.*}} {transpose_a} {{.*}} tensor<64x256xf32, [[SPLIT]]>
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[DQ0W:.+]] = fa.mma_wait %[[DQ0]] pending = 1
// CHECK: fa.store_shared %[[DQ0W]], %{{.*}} : tensor<64x128xf32, [[SPLIT]]>, memref<4x64x32xf32, #gpu.address_space<workgroup>>
// CHECK: %[[K1:.+]] = fa.shared_tile %{{.*}} : memref<2x64x64xbf16, #gpu.address_space<workgroup>> -> tensor<64x128xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: %[[DQ1:.+]] = fa.matmul %[[DS]], %[[K1]], %{{.*}} : {{.*}}, tensor<64x128xf32, [[SPLIT]]>
// CHECK: %[[DK:.+]] = fa.matmul %[[DS]], %[[Q]], %{{.*}} {transpose_a} {{.*}} tensor<64x256xf32, [[SPLIT]]>
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[DQ1W:.+]] = fa.mma_wait %[[DQ1]] pending = 1
// dV has completed: dO_i's stage is released.
// CHECK-NEXT: arith.addi
// CHECK-NEXT: llvm.inttoptr
// CHECK-NEXT: nvvm.mbarrier.arrive %
// CHECK: fa.store_shared %[[DQ1W]], %{{.*}} : tensor<64x128xf32, [[SPLIT]]>, memref<4x64x32xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.arrive %
// CHECK: fa.mma_wait %[[DV]] pending = 1
// CHECK: fa.mma_wait %[[DK]] pending = 0
// Each warpgroup stores its 128 columns of dK_j and dV_j.
// CHECK: fa.store_fragment {{.*}} : tensor<64x256xbf16, [[SPLIT]]>, memref<?xbf16>
// CHECK: fa.store_fragment {{.*}} : tensor<64x256xbf16, [[SPLIT]]>, memref<?xbf16>

// Lowered: S and dP on each warpgroup's 32 keys (m64n32, 16 k-steps of
// D = 256), dQ_i's parts (m64n64 each, K N-major) and dV, dK (m64n128
// from the P and dS panels, imm-trans-a), four k-steps of the 64 keys or
// queries each.
// LOWER-LABEL: gpu.func @grad_main
// LOWER-COUNT-32: :16 = fa.wgmma a(desc {{[^{]*}} : bf16 -> f32,
// LOWER-COUNT-4: :32 = fa.wgmma a(desc {{.*}} {transpose_b} : bf16 -> f32,
// LOWER-COUNT-4: :64 = fa.wgmma a(desc {{.*}} {transpose_a, transpose_b} : bf16 -> f32,
// LOWER-COUNT-4: :32 = fa.wgmma a(desc {{.*}} {transpose_b} : bf16 -> f32,
// LOWER-COUNT-4: :64 = fa.wgmma a(desc {{.*}} {transpose_a, transpose_b} : bf16 -> f32,
// No fa op but the instruction ops (fa.wgmma, fa.wgmma_wait) is left.
// LOWER-NOT: fa.{{[a-vx-z]}}
// LOWER: gpu.return

// Deterministic, the dQ writer reads a part only at its Q block's turn:
// a staging buffer per part (two of 32 KB) comes before a second Q stage,
// so the consumers never wait for a turn within their step. Same 208 KB.
// DET-LABEL: gpu.func @grad_main(
// DET: memref.view {{.*}}[%c65536][] : {{.*}} to memref<1x4x64x64xbf16, #gpu.address_space<workgroup>>
// DET: memref.view {{.*}}[%c98304][] : {{.*}} to memref<1x4x64x64xbf16, #gpu.address_space<workgroup>>
// DET: %[[STAGE0:[^ ]+]] = memref.view {{.*}}[%c147456][] : {{.*}} to memref<4x64x32xf32, #gpu.address_space<workgroup>>
// DET: %[[STAGE1:[^ ]+]] = memref.view {{.*}}[%c180224][] : {{.*}} to memref<4x64x32xf32, #gpu.address_space<workgroup>>
// kv_full, q_full / q_empty, do_full / do_empty, dq_full / dq_empty x 2,
// and the second dQ writer's dq_full x 2 (its steps' own phases).
// DET-COUNT-11: nvvm.mbarrier.init
// DET-NOT: nvvm.mbarrier.init
// Two dQ writers, the first threads of the producer warpgroup's second
// and third warps, taking the steps in turn: each passes its own Q
// block's turn once its reduce-adds complete.
// DET: arith.cmpi eq, %thread_id_x, %c288 : index
// DET: arith.remui %{{[^,]+}}, %c2 : index
// DET: arith.cmpi eq, %thread_id_x, %c320 : index
// DET: arith.select %{{[^,]+}}, %[[STAGE0]], %[[STAGE1]]
// DET: fa.store_shared %{{[^,]+}}, %{{[^ ]+}} : tensor<64x128xf32, {{.*}}>, memref<4x64x32xf32, #gpu.address_space<workgroup>>
// DET: arith.select %{{[^,]+}}, %[[STAGE0]], %[[STAGE1]]
// DET: fa.store_shared %{{[^,]+}}, %{{[^ ]+}} : tensor<64x128xf32, {{.*}}>, memref<4x64x32xf32, #gpu.address_space<workgroup>>

func.func @grad(%q: tensor<1x4x96x256xbf16>, %k: tensor<1x2x200x256xbf16>, %v: tensor<1x2x200x256xbf16>,
                %o: tensor<1x4x96x256xbf16>, %do: tensor<1x4x96x256xbf16>, %lse: tensor<1x4x96xf32>)
    -> (tensor<1x4x96x256xbf16>, tensor<1x2x200x256xbf16>, tensor<1x2x200x256xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>, tile = #fa.tile<block_m = 64, block_n = 64, stages = 2, warps = 8>}
      : (tensor<1x4x96x256xbf16>, tensor<1x2x200x256xbf16>, tensor<1x2x200x256xbf16>,
         tensor<1x4x96x256xbf16>, tensor<1x4x96x256xbf16>, tensor<1x4x96xf32>)
      -> (tensor<1x4x96x256xbf16>, tensor<1x2x200x256xbf16>, tensor<1x2x200x256xbf16>)
  return %dq, %dk, %dv : tensor<1x4x96x256xbf16>, tensor<1x2x200x256xbf16>, tensor<1x2x200x256xbf16>
}
