// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-recompute-backward --convert-fa-to-gpu="chip=sm_90a" | FileCheck %s --check-prefix=LOWER

// The sm_90a backward above D = 128 (64 x 64, 8 warps): one warpgroup
// cannot hold dK_j and dV_j (64 keys x 256 f32 each), so the two consumer
// warpgroups split *both* kinds of fragment's columns (#fa.fragment
// columnGroups = 2): the query-row ones (S, dP on 32 keys each, dQ_i on
// 128 head dims) and the key-row ones (dK_j, dV_j on 128 head dims each).
// CHECK-LABEL: gpu.func @grad_main(
// CHECK-SAME: nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// CHECK: setmaxnreg.inc.sync.aligned.u32 240;
// CHECK: %[[Q:.+]] = fa.shared_tile %{{.*}}[%{{.*}}] : memref<1x4x64x64xbf16, #gpu.address_space<workgroup>> -> tensor<64x256xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: %[[K:.+]] = fa.shared_tile %{{.*}} : memref<4x64x64xbf16, #gpu.address_space<workgroup>> -> tensor<64x256xbf16, #fa.tma_shared<swizzleBytes = 128>>
// CHECK: fa.qk_scores %[[Q]], %[[K]] {{.*}} -> tensor<64x64xf32, [[SPLIT:#fa.fragment<warps = 8, mTiles = 1, columnGroups = 2>]]>
// CHECK: fa.store_shared %{{.*}}, %{{.*}} : tensor<64x64xbf16, [[SPLIT]]>, memref<1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: fa.store_shared %{{.*}}, %[[DSBUF:.+]] : tensor<64x64xbf16, [[SPLIT]]>, memref<1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[DS:.+]] = fa.shared_tile %[[DSBUF]]
// CHECK: "bar.sync $0, $1;", "r,r" %c1_i32, %c256_i32
// CHECK: %[[DQ:.+]] = fa.matmul %[[DS]], %[[K]], %{{.*}} : tensor<64x64xbf16, #fa.tma_shared<swizzleBytes = 128>>, tensor<64x256xbf16, #fa.tma_shared<swizzleBytes = 128>>, tensor<64x256xf32, [[SPLIT]]>
// CHECK: %[[DV:.+]] = fa.matmul {{.*}} {transpose_a} {{.*}} tensor<64x256xf32, [[SPLIT]]>
// CHECK: %[[DK:.+]] = fa.matmul %[[DS]], %[[Q]], %{{.*}} {transpose_a} {{.*}} tensor<64x256xf32, [[SPLIT]]>
// CHECK: %[[DQW:.+]] = fa.mma_wait %[[DQ]] pending = 2
// dQ_i's 256 f32 columns: eight 32-column panels, one staging buffer.
// CHECK: fa.store_shared %[[DQW]], %{{.*}} : tensor<64x256xf32, [[SPLIT]]>, memref<8x64x32xf32, #gpu.address_space<workgroup>>
// CHECK: fa.mma_wait %[[DV]] pending = 1
// CHECK: fa.mma_wait %[[DK]] pending = 0
// Each warpgroup stores its 128 columns of dK_j and dV_j.
// CHECK: fa.store_fragment {{.*}} : tensor<64x256xbf16, [[SPLIT]]>, memref<?xbf16>
// CHECK: fa.store_fragment {{.*}} : tensor<64x256xbf16, [[SPLIT]]>, memref<?xbf16>

// Lowered: S and dP on each warpgroup's 32 keys (m64n32, 16 k-steps of
// D = 256), dQ_i (m64n128, K N-major) and dV, dK (m64n128 from the P and
// dS panels, imm-trans-a), four k-steps of the 64 keys or queries each.
// LOWER-LABEL: gpu.func @grad_main
// LOWER-COUNT-32: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{.*}}, 1, 1, 0, 0;
// LOWER-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, 1, 1, 0, 1;
// LOWER-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, 1, 1, 1, 1;
// LOWER-NOT: fa.
// LOWER: gpu.return

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
