// The input is fa-gpu-distribute's output (fa-gpu-distribute.mlir), printed
// and parsed again: the distributed level is ordinary IR.
// RUN: fa-opt %s --split-input-file --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80" \
// RUN:   | fa-opt --split-input-file --fa-gpu-lower-fragments="chip=sm_80" \
// RUN:   | FileCheck %s --implicit-check-not="fa." --implicit-check-not="#fa"
// RUN: fa-opt %s --split-input-file --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80" \
// RUN:   | not fa-opt --split-input-file --fa-gpu-lower-fragments="chip=sm_75" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHIP
// CHIP: error: unknown chip 'sm_75' (supported: sm_80, sm_90a)

// fa-gpu-lower-fragments rewrites each fa op on a fragment layout into what
// one thread does: no fa op and no #fa layout is left (--implicit-check-not).
// Per thread, with 4 warps and one m16 tile per warp, a 64 x 64 f32 tile is
// vector<32xf32> (16 rows x 64 columns / 32 lanes) and a row statistic is
// vector<2xf32> (rows l/4 and l/4 + 8).

// Causal, D = 64, bf16.
// CHECK-LABEL: gpu.func @causal_d64
// The tiles are memref.views of the kernel's shared memory at constant
// byte shifts: Q at 0, K's two stages at 8192, V's at 24576.
// CHECK: %[[SMEM:[^ ]+]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [40960], strides: [1]
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: %[[QV:[^ ]+]] = memref.view %[[SMEM]][%{{.*}}][] : memref<40960xi8, [[WG:#gpu.address_space<workgroup>]]> to memref<64x64xbf16, [[WG]]>
// CHECK-NEXT: arith.constant 8192 : index
// CHECK-NEXT: %[[KV:[^ ]+]] = memref.view %[[SMEM]][%{{.*}}][] : memref<40960xi8, [[WG]]> to memref<2x64x64xbf16, [[WG]]>
// CHECK-NEXT: arith.constant 24576 : index
// CHECK-NEXT: %[[VV:[^ ]+]] = memref.view %[[SMEM]][%{{.*}}][] : memref<40960xi8, [[WG]]> to memref<2x64x64xbf16, [[WG]]>
// Q as operand fragments, before the loop: fa.load_operand is one
// ldmatrix.x4 per k16 step (D = 64: four), its 32-bit address based on the
// shared memory's, Q's shift (0) in the constant GEP (the immediate).
// CHECK: gpu.barrier
// CHECK: %[[QS:[^ ]+]] = memref.cast %[[QV]] : memref<64x64xbf16, [[WG]]> to memref<64x64xbf16, strided<[64, 1], offset: ?>, [[WG]]>
// CHECK: memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK-COUNT-4: nvvm.ldmatrix %{{[^ ]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>
// The loop carries m, l (quad-partial) and acc in registers.
// CHECK: %[[LOOP:[^ ]+]]:3 = scf.for
// CHECK-SAME: -> (vector<2xf32>, vector<2xf32>, vector<32xf32>)
//
// S = Q·K_jᵀ: fa.shared_tile is a subview of the stage; fa.qk_scores is
// ldmatrix of K and mma.sync m16n8k16 on bf16 pairs as i32, into f32. The
// address: the shared memory's plus the stage's offset, K's shift (8192)
// in the immediate.
// CHECK: %[[KT:[^ ]+]] = memref.subview %[[KV]][%{{.*}}, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xbf16, [[WG]]> to memref<64x64xbf16, strided<[64, 1], offset: ?>, [[WG]]>
// CHECK: memref.extract_strided_metadata %[[KT]]
// CHECK: memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: llvm.getelementptr %{{[^[]+}}[8192]
// CHECK-NEXT: nvvm.ldmatrix %{{[^ ]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// The mask: only a tile the causal diagonal (or the sequence end) cuts
// runs the per-element selects.
// CHECK: %[[MASKED:[^ ]+]] = scf.if %{{.*}} -> (vector<32xf32>) {
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: scf.yield %{{.*}} : vector<32xf32>
// CHECK: } else {
// CHECK-NEXT: scf.yield %{{.*}} : vector<32xf32>
// CHECK-NEXT: }
// Row max: a thread's columns, then the quad (xor 1, xor 2), then the
// deferred scale, once per row.
// CHECK: %[[C:[^ ]+]] = arith.constant 0.180336878 : f32
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: %[[SH1:[^ ]+]], %{{.*}} = gpu.shuffle  xor %[[X:[^ ]+]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[X1:[^ ]+]] = arith.maximumf %[[X]], %[[SH1]] : f32
// CHECK: %[[SH2:[^ ]+]], %{{.*}} = gpu.shuffle  xor %[[X1]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[X2:[^ ]+]] = arith.maximumf %[[X1]], %[[SH2]] : f32
// CHECK-NEXT: arith.mulf %[[X2]], %[[C]] : f32
// alpha = exp2(m - m_new) and P = exp2(c·S - m_new): ex2.approx.ftz (the NVVM
// intrinsic; math.exp2 would be a libdevice call), the deferred scale in
// the FFMA; 2 + 32 per thread.
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: %[[CS:[^ ]+]] = arith.constant 0.180336878 : f32
// CHECK: %[[SC:[^ ]+]] = arith.mulf %{{.*}}, %[[CS]] fastmath<contract> : f32
// CHECK-NEXT: %[[SHIFTED:[^ ]+]] = arith.subf %[[SC]], %{{.*}} fastmath<contract> : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[SHIFTED]]) : (f32) -> f32
// CHECK-COUNT-31: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: llvm.call_intrinsic
// P rounded to bf16 for the second MMA.
// CHECK: arith.truncf %{{.*}} : vector<32xf32> to vector<32xbf16>
// l = alpha·l + rowsum(P), quad-partial: a thread adds its own columns,
// no shuffle in the loop.
// CHECK-NOT: gpu.shuffle
// CHECK: %[[LNEW:[^ ]+]] = arith.addf %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK-NOT: gpu.shuffle
// P·V after the V wait: ldmatrix.trans of V, mma.sync.
// CHECK: nvvm.cp.async.wait.group 2
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.shuffle
// CHECK: %[[VT:[^ ]+]] = memref.subview %[[VV]][%{{.*}}, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xbf16, [[WG]]>
// CHECK: memref.extract_strided_metadata %[[VT]]
// CHECK: memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: llvm.getelementptr %{{[^[]+}}[24576]
// CHECK-NEXT: nvvm.ldmatrix %{{[^ ]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>
// CHECK: nvvm.mma.sync
// CHECK-NOT: gpu.shuffle
// CHECK: scf.yield %{{.*}}, %[[LNEW]], %{{.*}} : vector<2xf32>, vector<2xf32>, vector<32xf32>
// Epilogue. fa.convert_layout: the quad sum of each of the 2 rows of l.
// CHECK: arith.mulf %[[LOOP]]#0, %{{.*}} : vector<2xf32>
// CHECK: %[[L0:[^ ]+]] = vector.extract %[[LOOP]]#1[0] : f32 from vector<2xf32>
// CHECK: %[[L1:[^ ]+]] = vector.extract %[[LOOP]]#1[1] : f32 from vector<2xf32>
// CHECK: %[[S01:[^ ]+]], %{{.*}} = gpu.shuffle  xor %[[L0]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[L01:[^ ]+]] = arith.addf %[[L0]], %[[S01]] : f32
// CHECK: %[[S02:[^ ]+]], %{{.*}} = gpu.shuffle  xor %[[L01]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[LROW0:[^ ]+]] = arith.addf %[[L01]], %[[S02]] : f32
// CHECK: gpu.shuffle  xor %[[L1]]
// CHECK: gpu.shuffle  xor
// CHECK: %[[LFULL:[^ ]+]] = vector.from_elements %[[LROW0]], %{{.*}} : vector<2xf32>
// 1/l (0 for an empty row), ln l = lg2.approx(l)·ln 2.
// CHECK: arith.divf %{{.*}}, %[[LFULL]] : vector<2xf32>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK-NOT: gpu.shuffle
// fa.store_fragment of O: a thread writes bf16 pairs of its two rows, each
// row only if it is < q_len.
// CHECK: arith.truncf %{{.*}} : vector<32xf32> to vector<32xbf16>
// CHECK: scf.if %{{.*}} {
// CHECK-COUNT-8: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 4 : i64} : memref<?xbf16>, vector<2xbf16>
// CHECK: scf.if %{{.*}} {
// CHECK-COUNT-8: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 4 : i64} : memref<?xbf16>, vector<2xbf16>
// fa.store_fragment of the LSE: one lane of the quad per row.
// CHECK: scf.if %{{.*}} {
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK: scf.if %{{.*}} {
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK: gpu.return
func.func @causal_d64(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = fa.attention %q, %k, %v {mask = #fa.mask<causal>}
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>)
      -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>)
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}

// -----

// Softcap: cap·tanh(scale·q·k / cap) per score, tanh as llvm.tanh with
// `afn` (tanh.approx.f32; LLVM 22 has no NVVM tanh intrinsic): scale / cap
// = 0.125 / 30.
// CHECK-LABEL: gpu.func @softcap
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK: %[[C:[^ ]+]] = arith.constant 0.00416666688 : f32
// CHECK-NEXT: %[[X:[^ ]+]] = arith.mulf %{{.*}}, %[[C]] : f32
// CHECK-NEXT: llvm.intr.tanh(%[[X]]) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
// CHECK-COUNT-31: llvm.intr.tanh
// CHECK-NOT: llvm.intr.tanh
// The tanh is the deferred score: cap·log2(e) = 43.28 is applied after the
// row max and in the exponent.
// CHECK: arith.constant 43.2808495 : f32
// CHECK: gpu.return
func.func @softcap(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> tensor<1x1x128x64xbf16> {
  %o = fa.attention %q, %k, %v {softcap = 30.0 : f32}
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}

// -----

// ALiBi: the slope, loaded once per block, scaled by -log2(e); per score
// |d| as max(d, -d) (NVVM's max.f32: no libdevice) and a contracted
// multiply-add, one FFMA (|d| · (-slope·log2 e) + S).
// CHECK-LABEL: gpu.func @alibi
// CHECK-SAME: %[[SLOPES:arg5]]: memref<?xf32>
// CHECK: %[[SLOPE:[^ ]+]] = memref.load %[[SLOPES]][%{{.*}}] : memref<?xf32>
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK: %[[D:[^ ]+]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[ND:[^ ]+]] = arith.negf %[[D]] : f32
// CHECK-NEXT: %[[AD:[^ ]+]] = llvm.call_intrinsic "llvm.nvvm.fmax.f"(%[[D]], %[[ND]])
// CHECK-NEXT: %[[B:[^ ]+]] = arith.mulf %[[AD]], %[[NEGSLOPE:[^ ]+]] fastmath<contract> : f32
// CHECK-NEXT: arith.addf %[[B]], %{{.*}} fastmath<contract> : f32
// CHECK-COUNT-31: arith.mulf %{{.*}}, %[[NEGSLOPE]] fastmath<contract> : f32
// CHECK: gpu.return
func.func @alibi(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>, %slopes: tensor<2xf32>)
    -> (tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>) {
  %o, %lse = fa.attention %q, %k, %v alibi(%slopes) {mask = #fa.mask<causal>}
      : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<2xf32>)
      -> (tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>)
  return %o, %lse : tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>
}

// -----

// D = 256, f16: Q stays #fa.shared, so fa.qk_scores reads its A fragments
// with ldmatrix inside the loop, next to K's (Q's shift 0, K's 32768 in
// the immediates, on the shared memory's address); f16 operands stay
// vector<2xf16>.
// CHECK-LABEL: gpu.func @d256_f16
// CHECK: %[[SMEM:[^ ]+]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [163840], strides: [1]
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: %[[QV:[^ ]+]] = memref.view %[[SMEM]][%{{.*}}][] : memref<163840xi8, [[WG:#gpu.address_space<workgroup>]]> to memref<64x256xf16, [[WG]]>
// CHECK-NEXT: arith.constant 32768 : index
// CHECK-NEXT: %[[KV:[^ ]+]] = memref.view %[[SMEM]][%{{.*}}][] : memref<163840xi8, [[WG]]> to memref<2x64x256xf16, [[WG]]>
// CHECK: %[[QS:[^ ]+]] = memref.cast %[[QV]] : memref<64x256xf16, [[WG]]> to memref<64x256xf16, strided<[256, 1], offset: ?>, [[WG]]>
// CHECK-NOT: nvvm.ldmatrix
// CHECK: scf.for
// CHECK-SAME: -> (vector<2xf32>, vector<2xf32>, vector<128xf32>)
// CHECK: %[[KT:[^ ]+]] = memref.subview %[[KV]]
// CHECK: memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: nvvm.ldmatrix %{{[^ ]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>
// CHECK: memref.extract_strided_metadata %[[KT]]
// CHECK: memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: llvm.getelementptr %{{[^[]+}}[32768]
// CHECK-NEXT: nvvm.ldmatrix %{{[^ ]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: arith.truncf %{{.*}} : vector<32xf32> to vector<32xf16>
// CHECK: gpu.return
func.func @d256_f16(%q: tensor<1x1x128x256xf16>, %k: tensor<1x1x128x256xf16>, %v: tensor<1x1x128x256xf16>)
    -> tensor<1x1x128x256xf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16>) -> tensor<1x1x128x256xf16>
  return %o : tensor<1x1x128x256xf16>
}

// -----

// block_m = 128: two m16 tiles per warp share each K fragment: each
// ldmatrix.x4 of K (two n8 column blocks) feeds four mma.sync, two per m
// tile (one m tile: two). That the two m tiles read the same B registers is
// visible after CSE: convert-fa-to-gpu.mlir.
// CHECK-LABEL: gpu.func @two_m_tiles
// CHECK: scf.for
// CHECK-SAME: -> (vector<4xf32>, vector<4xf32>, vector<64xf32>)
// CHECK: nvvm.ldmatrix %{{[^ ]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>
// CHECK-NOT: nvvm.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: nvvm.ldmatrix
func.func @two_m_tiles(%q: tensor<1x1x256x64xbf16>, %k: tensor<1x1x256x64xbf16>, %v: tensor<1x1x256x64xbf16>)
    -> tensor<1x1x256x64xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>) -> tensor<1x1x256x64xbf16>
  return %o : tensor<1x1x256x64xbf16>
}
