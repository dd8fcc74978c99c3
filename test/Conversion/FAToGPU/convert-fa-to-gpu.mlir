// RUN: fa-opt %s --split-input-file --fa-tile --fa-fuse-online-softmax --convert-fa-to-gpu="chip=sm_80" | FileCheck %s

// The fused loop nest becomes one sm_80 kernel: (batch, head, Q block) is
// the grid, the KV loop runs inside with a double-buffered cp.async
// pipeline, S = QKᵀ and O += PV are mma.sync, row reductions are shuffles.
// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @fa_kernels
// Dynamic shared memory through a public zero-sized global (docs/toolchain.md).
// CHECK: memref.global "public" @fa_smem : memref<0xi8, #gpu.address_space<workgroup>> {alignment = 1024 : i64}
// CHECK: gpu.func @attention(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: i64
// CHECK-SAME: kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// Grid: Q block, head, batch.
// CHECK: gpu.block_id  x
// CHECK: gpu.block_id  y
// CHECK: gpu.block_id  z
// Q [64][64] at byte 0 of shared memory, K and V [2 stages][64][64] at
// 8192 and 24576. Every tile is addressed as the shared memory's 32-bit
// address plus its shift as an instruction immediate, so Q's own view is
// left unused and folds away.
// CHECK: %[[SMEM:[^ ]+]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [40960], strides: [1]
// CHECK-NEXT: memref.view %[[SMEM]][%c8192][] : memref<40960xi8, #gpu.address_space<workgroup>> to memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: memref.view %[[SMEM]][%c24576][] : memref<40960xi8, #gpu.address_space<workgroup>> to memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[SPTR:[^ ]+]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK-NEXT: %[[SBASE:[^ ]+]] = arith.index_castui %[[SPTR]] : index to i32
// 16-byte cp.async (nvvm.cp.async .cg) with a source size in a register:
// zero-fill past the sequence end. Q's four rounds (16 rows, 2048 bytes
// apart) share one 32-bit shared address and differ in a constant GEP (the
// instruction's immediate).
// CHECK: %[[SIZE:[^ ]+]] = arith.select %{{.*}}, %c16_i32, %c0_i32 : i32
// CHECK: %[[QADDR:[^ ]+]] = arith.addi %[[SBASE]], %{{.*}} : i32
// CHECK: %[[QPTR:[^ ]+]] = llvm.inttoptr %[[QADDR]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: nvvm.cp.async.shared.global %[[QPTR]], %{{.*}}, 16, cache =  cg, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: llvm.getelementptr %[[QPTR]][2048]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK: llvm.getelementptr %[[QPTR]][4096]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK: llvm.getelementptr %[[QPTR]][6144]
// CHECK-NEXT: nvvm.cp.async.shared.global
// K_0 into stage 0, at K's shift.
// CHECK: llvm.getelementptr %[[QPTR]][8192]
// CHECK-NEXT: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// Q fragments once, before the KV loop.
// CHECK: nvvm.ldmatrix %{{[^ ]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: scf.for
// K_{j+1} is prefetched (into stage (j+1) % 2: the stage's offset joins the
// address, K's shift stays in the immediate) while S = Q K_jᵀ runs on
// mma.sync (bf16 as i32 pairs), K_j read by ldmatrix the same way.
// CHECK:   scf.if
// CHECK:   arith.muli %{{.*}}, %c8192 : index
// CHECK:   llvm.getelementptr %{{[^[]+}}[8192]
// CHECK-NEXT:   nvvm.cp.async.shared.global
// CHECK:   nvvm.cp.async.commit.group
// CHECK:   memref.subview
// CHECK:   llvm.getelementptr %{{[^[]+}}[8192]
// CHECK-NEXT:   nvvm.ldmatrix %{{[^ ]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>
// CHECK:   nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<bf16>
// Causal: only tiles the diagonal cuts are masked.
// CHECK:   scf.if
// CHECK:     arith.select {{.*}} : f32
// Row max over the 4 lanes of a row, then ex2.approx.ftz of the FFMA-scaled
// scores (the NVVM intrinsic: math.exp2 would need libdevice).
// CHECK:   gpu.shuffle  xor
// CHECK:   llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// V via ldmatrix.trans for O += PV.
// CHECK:   nvvm.cp.async.wait.group 2
// CHECK:   gpu.barrier
// CHECK: nvvm.ldmatrix %{{[^ ]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32
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
// after scf.for, on the shared memory's address: Q's shift 0, K's 32768).
// CHECK-LABEL: gpu.func @attention_f16_d256
// CHECK: %[[SMEM:[^ ]+]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [163840], strides: [1]
// CHECK: %[[SPTR:[^ ]+]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK-NEXT: %[[SBASE:[^ ]+]] = arith.index_castui %[[SPTR]] : index to i32
// CHECK-NOT: nvvm.ldmatrix
// CHECK: scf.for
// CHECK: %[[KT:[^ ]+]] = memref.subview
// CHECK: %[[QADDR:[^ ]+]] = arith.addi %[[SBASE]], %{{.*}} : i32
// CHECK-NEXT: %[[QPTR:[^ ]+]] = llvm.inttoptr %[[QADDR]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: nvvm.ldmatrix %[[QPTR]] {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>
// CHECK: memref.extract_strided_metadata %[[KT]]
// CHECK: llvm.getelementptr %{{[^[]+}}[32768]
// CHECK-NEXT: nvvm.ldmatrix
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
// Q [128][64] takes the first 16384 bytes: K's stages start after it.
// CHECK: memref.view %{{.*}}[%c16384][] : memref<49152xi8, #gpu.address_space<workgroup>> to memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: %[[K:[^ ]+]] = nvvm.ldmatrix %{{[^ ]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>
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
