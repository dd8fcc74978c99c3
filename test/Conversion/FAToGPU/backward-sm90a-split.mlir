// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-recompute-backward --convert-fa-to-gpu="chip=sm_90a" | FileCheck %s --check-prefix=LOWER

// The sm_90a backward's 64 x 128 tile (D = 128's): two consumer warpgroups
// own 64 keys each (dK_j, dV_j rows) and share the 64 query rows, S's
// columns split between them (#fa.fragment columnGroups = 2: each computes
// S = Q K_wᵀ on its own keys). dQ_i = dS·K_j needs every key: it reads dS
// from shared memory after the barrier, each warpgroup 64 of D's columns,
// issued before dV's and dK's wgmmas and awaited alone.
// CHECK-LABEL: gpu.func @grad_main(
// CHECK-SAME: nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// The LSE and D rows are loaded before S's and dP's wgmmas issue.
// CHECK: fa.load_fragment {{.*}} -> tensor<64xf32, [[SPLIT:#fa.fragment<warps = 8, mTiles = 1, columnGroups = 2>]]>
// CHECK: fa.load_fragment {{.*}} -> tensor<64xf32, [[SPLIT]]>
// CHECK: %[[Q:.+]] = fa.shared_tile %{{.*}}[%{{.*}}] : memref<2x2x64x64xbf16, #gpu.address_space<workgroup>> -> tensor<64x128xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: %[[K:.+]] = fa.shared_tile %{{.*}} : memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> tensor<128x128xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: fa.qk_scores %[[Q]], %[[K]] {{.*}} -> tensor<64x128xf32, #fa.fragment<warps = 8, mTiles = 1, deferredScale = {{[^,]+}}, columnGroups = 2>>
// CHECK: fa.store_shared %{{.*}}, %{{.*}} : tensor<64x128xbf16, [[SPLIT]]>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: fa.store_shared %{{.*}}, %[[DSBUF:.+]] : tensor<64x128xbf16, [[SPLIT]]>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[DS:.+]] = fa.shared_tile %[[DSBUF]]
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK: %[[DQ:.+]] = fa.matmul %[[DS]], %[[K]], %{{.*}} : tensor<64x128xbf16, #fa.tma_shared<swizzleBytes = 128>>, tensor<128x128xbf16, #fa.tma_shared<swizzleBytes = 128>>, tensor<64x128xf32, [[SPLIT]]>
// CHECK: %[[DV:.+]] = fa.matmul {{.*}} {transpose_a} {{.*}} tensor<128x128xf32, [[KEYS:#fa.fragment<warps = 8, mTiles = 1>]]>
// CHECK: %[[DK:.+]] = fa.matmul %[[DS]], %[[Q]], %{{.*}} {transpose_a} {{.*}} tensor<128x128xf32, [[KEYS]]>
// CHECK: %[[DQW:.+]] = fa.mma_wait %[[DQ]] pending = 2
// CHECK: fa.store_shared %[[DQW]], %{{.*}} : tensor<64x128xf32, [[SPLIT]]>, memref<4x64x32xf32, #gpu.address_space<workgroup>>
// dQ_i handed to the dQ writer (no barrier: dq_full counts every consumer).
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NOT: nvvm.barrier id
// CHECK: nvvm.mbarrier.arrive %
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// CHECK: fa.mma_wait %[[DV]] pending = 1
// CHECK: fa.mma_wait %[[DK]] pending = 0
// dK's and dQ's α (the scale, 0.0883883461 at D = 128) is left out of dS
// and applied once: to dK_j before its store, and to dQ in the
// postprocess (deferredGradientScale; the postprocess is both chips' and
// checked in backward-sm80.mlir).
// CHECK: %[[DKA:.+]] = arith.mulf %{{.*}}, %{{.*}} : tensor<128x128xf32, [[KEYS]]>
// CHECK: %[[DK16:.+]] = arith.truncf %[[DKA]]
// CHECK: fa.store_fragment %[[DK16]]

// Lowered: S on each warpgroup's 64 keys (m64n64), dQ_i from dS's
// descriptor with K's panel of the warpgroup's columns (N-major), dV and
// dK from the P and dS panels (m64n128, imm-trans-a).
// LOWER-LABEL: gpu.func @grad_main
// LOWER: :32 = fa.wgmma a(desc {{[^{]*}} : bf16 -> f32,
// LOWER: :32 = fa.wgmma a(desc {{.*}} {transpose_b} : bf16 -> f32,
// LOWER: :64 = fa.wgmma a(desc {{.*}} {transpose_a, transpose_b} : bf16 -> f32,
// No fa op but the instruction ops (fa.wgmma, fa.wgmma_wait) is left.
// LOWER-NOT: fa.{{[a-vx-z]}}
// LOWER: gpu.return

func.func @grad(%q: tensor<1x4x96x128xbf16>, %k: tensor<1x2x200x128xbf16>, %v: tensor<1x2x200x128xbf16>,
                %o: tensor<1x4x96x128xbf16>, %do: tensor<1x4x96x128xbf16>, %lse: tensor<1x4x96xf32>)
    -> (tensor<1x4x96x128xbf16>, tensor<1x2x200x128xbf16>, tensor<1x2x200x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>, tile = #fa.tile<block_m = 64, block_n = 128, stages = 2, warps = 8>}
      : (tensor<1x4x96x128xbf16>, tensor<1x2x200x128xbf16>, tensor<1x2x200x128xbf16>,
         tensor<1x4x96x128xbf16>, tensor<1x4x96x128xbf16>, tensor<1x4x96xf32>)
      -> (tensor<1x4x96x128xbf16>, tensor<1x2x200x128xbf16>, tensor<1x2x200x128xbf16>)
  return %dq, %dk, %dv : tensor<1x4x96x128xbf16>, tensor<1x2x200x128xbf16>, tensor<1x2x200x128xbf16>
}
