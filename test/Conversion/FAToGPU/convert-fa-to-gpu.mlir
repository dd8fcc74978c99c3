// RUN: fa-opt %s --split-input-file --fa-tile --fa-fuse-online-softmax --convert-fa-to-gpu="chip=sm_80" | FileCheck %s

// The fused loop nest becomes one sm_80 kernel: (batch, head, Q block) is
// the grid, the KV loop runs inside with a double-buffered cp.async
// pipeline, S = QKᵀ and O += PV are mma.sync, row reductions are shuffles.
// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @fa_kernels
// Dynamic shared memory through a public zero-sized global (TOOLCHAIN.md).
// CHECK: memref.global "public" @fa_smem : memref<0xi8, #gpu.address_space<workgroup>> {alignment = 1024 : i64}
// CHECK: gpu.func @attention(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: i64
// CHECK-SAME: kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// Grid: Q block, head, batch.
// CHECK: gpu.block_id  x
// CHECK: gpu.block_id  y
// CHECK: gpu.block_id  z
// Q [64][64], K and V [2 stages][64][64] in shared memory.
// CHECK: memref.view {{.*}} to memref<64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// 16-byte cp.async with a source size: zero-fill past the sequence end.
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1}
// CHECK: nvvm.cp.async.commit.group
// Q fragments once, before the KV loop.
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4+{{[0-9]+}}];
// CHECK: scf.for
// K_{j+1} is prefetched while S = Q K_jᵀ runs on mma.sync (bf16 as i32 pairs).
// CHECK:   nvgpu.device_async_copy
// CHECK:   nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<bf16>
// Causal: only tiles the diagonal cuts are masked.
// CHECK:   scf.if
// CHECK:     arith.select {{.*}} : f32
// Row max over the 4 lanes of a row, then ex2.approx of the FFMA-scaled
// scores (the NVVM intrinsic: math.exp2 would need libdevice).
// CHECK:   gpu.shuffle  xor
// CHECK:   llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// V via ldmatrix.trans for O += PV.
// CHECK:   nvvm.cp.async.wait.group 2
// CHECK:   gpu.barrier
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4+{{[0-9]+}}];
// CHECK:   nvvm.mma.sync
// Epilogue: O = acc / l, LSE = m·scale + ln(l) via lg2.approx.
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK-NOT: func.func
func.func @attention(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = fa.attention %q, %k, %v {mask = #fa.mask<causal>}
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>)
      -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>)
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}

// -----

// f16 keeps vector<2xf16> operands for mma.sync; D = 256 re-reads Q
// fragments inside the loop (Q stays #fa.shared: ldmatrix of the Q tile
// after scf.for).
// CHECK-LABEL: gpu.func @attention_f16_d256
// CHECK: %[[QS:[^ ]+]] = memref.cast %{{.*}} : memref<64x256xf16, #gpu.address_space<workgroup>> to memref<64x256xf16, strided<[256, 1], offset: ?>, #gpu.address_space<workgroup>>
// CHECK-NOT: ldmatrix.sync
// CHECK: scf.for
// CHECK: memref.extract_aligned_pointer_as_index %[[QS]]
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4+{{[0-9]+}}];
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {{.*}} : (vector<2xf16>, vector<2xf16>, f32)
func.func @attention_f16_d256(%q: tensor<1x1x128x256xf16>, %k: tensor<1x1x128x256xf16>, %v: tensor<1x1x128x256xf16>)
    -> tensor<1x1x128x256xf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16>) -> tensor<1x1x128x256xf16>
  return %o : tensor<1x1x128x256xf16>
}

// -----

// block_m = 128 with 4 warps: two m16 tiles per warp share each K and V
// fragment (one ldmatrix feeds two mma.sync, one per m tile, with the same
// B registers).
// CHECK-LABEL: gpu.func @attention_two_m_tiles
// CHECK: memref.view {{.*}} to memref<128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: %[[K:[^ ]+]] = llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4+{{[0-9]+}}];"
// CHECK: llvm.extractvalue %[[K]][0]
// CHECK: nvvm.mma.sync A[%[[A0:[0-9]+]], {{.*}}] B[%[[B0:[0-9]+]], %[[B1:[0-9]+]]]
// CHECK: nvvm.mma.sync A[%[[A0]], {{.*}}] B[
// CHECK: nvvm.mma.sync A[%[[A1:[0-9]+]], {{.*}}] B[%[[B0]], %[[B1]]]
func.func @attention_two_m_tiles(%q: tensor<1x1x256x64xbf16>, %k: tensor<1x1x256x64xbf16>, %v: tensor<1x1x256x64xbf16>)
    -> tensor<1x1x256x64xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>) -> tensor<1x1x256x64xbf16>
  return %o : tensor<1x1x256x64xbf16>
}
