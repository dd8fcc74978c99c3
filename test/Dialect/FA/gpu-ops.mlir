// RUN: fa-opt %s | FileCheck %s
// Round trip through the generic form must give the same custom form back.
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The distributed (GPU) level: the layout encodings fa-gpu-distribute puts
// on tile types, and the four ops it adds around the L2 tile ops.
#wg = #gpu.address_space<workgroup>
#shared = #fa.shared<rowElements = 64>
#shared128 = #fa.shared<rowElements = 128>
#operand = #fa.operand<warps = 4, mTiles = 2>
#row = #fa.fragment<warps = 4, mTiles = 2>
#partial = #fa.fragment<warps = 4, mTiles = 2, quadPartial = true>
#scores = #fa.fragment<warps = 4, mTiles = 2, deferredScale = 0.180336878 : f32>

// Every parameter of every layout prints back (defaults omitted).
// CHECK-LABEL: func.func @layouts
// CHECK-SAME: tensor<64x96xbf16, #fa.shared<rowElements = 128>>
// CHECK-SAME: tensor<128x64xbf16, #fa.operand<warps = 4, mTiles = 2>>
// CHECK-SAME: tensor<128x64xf32, #fa.fragment<warps = 4, mTiles = 2>>
// CHECK-SAME: tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2, quadPartial = true>>
// CHECK-SAME: tensor<128x64xf32, #fa.fragment<warps = 4, mTiles = 2, deferredScale = 0.180336878 : f32>>
// CHECK-SAME: tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true, deferredScale = 2.000000e+00 : f32>>
// quadPartial = false is the default: not printed.
// CHECK-SAME: tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1>>)
func.func @layouts(%a: tensor<64x96xbf16, #shared128>, %b: tensor<128x64xbf16, #operand>,
                   %c: tensor<128x64xf32, #row>, %d: tensor<128xf32, #partial>,
                   %e: tensor<128x64xf32, #scores>,
                   %f: tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true, deferredScale = 2.0 : f32>>,
                   %g: tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = false>>) {
  return
}

// fa.shared_tile with and without a stage, fa.load_operand.
// CHECK-LABEL: func.func @shared_tile
// CHECK: %[[Q:.*]] = fa.shared_tile %{{.*}} : memref<128x64xbf16, #gpu.address_space<workgroup>> -> tensor<128x64xbf16, #fa.shared<rowElements = 64>>
// CHECK: fa.load_operand %[[Q]] : tensor<128x64xbf16, #fa.shared<rowElements = 64>> -> tensor<128x64xbf16, #fa.operand<warps = 4, mTiles = 2>>
// CHECK: fa.shared_tile %{{.*}}[%{{.*}}] : memref<2x64x128xbf16, #gpu.address_space<workgroup>> -> tensor<64x128xbf16, #fa.shared<rowElements = 128>>
// A tile narrower than the padded row (D = 40 in rows of 64).
// CHECK: fa.shared_tile %{{.*}}[%{{.*}}] : memref<2x64x64xf16, #gpu.address_space<workgroup>> -> tensor<64x40xf16, #fa.shared<rowElements = 64>>
// GENERIC-LABEL: sym_name = "shared_tile"
// GENERIC: "fa.shared_tile"(%{{.*}}) : (memref<128x64xbf16, #gpu.address_space<workgroup>>) -> tensor<128x64xbf16, #fa.shared<rowElements = 64>>
// GENERIC: "fa.load_operand"(%{{.*}}) : (tensor<128x64xbf16, #fa.shared<rowElements = 64>>) -> tensor<128x64xbf16, #fa.operand<warps = 4, mTiles = 2>>
// GENERIC: "fa.shared_tile"(%{{.*}}, %{{.*}}) : (memref<2x64x128xbf16, #gpu.address_space<workgroup>>, index) -> tensor<64x128xbf16, #fa.shared<rowElements = 128>>
func.func @shared_tile(%smem_q: memref<128x64xbf16, #wg>, %smem_k: memref<2x64x128xbf16, #wg>,
                       %smem_v: memref<2x64x64xf16, #wg>, %stage: index)
    -> (tensor<128x64xbf16, #operand>, tensor<64x128xbf16, #shared128>, tensor<64x40xf16, #shared>) {
  %q = fa.shared_tile %smem_q : memref<128x64xbf16, #wg> -> tensor<128x64xbf16, #shared>
  %qa = fa.load_operand %q : tensor<128x64xbf16, #shared> -> tensor<128x64xbf16, #operand>
  %k = fa.shared_tile %smem_k[%stage] : memref<2x64x128xbf16, #wg> -> tensor<64x128xbf16, #shared128>
  %v = fa.shared_tile %smem_v[%stage] : memref<2x64x64xf16, #wg> -> tensor<64x40xf16, #shared>
  return %qa, %k, %v : tensor<128x64xbf16, #operand>, tensor<64x128xbf16, #shared128>, tensor<64x40xf16, #shared>
}

// fa.convert_layout (quad-partial rows to full rows) and fa.store_fragment
// of a 2-D tile (with a row stride) and of a row statistic (without).
// CHECK-LABEL: func.func @epilogue
// CHECK: %[[L:.*]] = fa.convert_layout %{{.*}} : tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2, quadPartial = true>> -> tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2>>
// CHECK: fa.store_fragment %{{.*}}, %{{.*}}[%{{.*}}] rows[%{{.*}}, %{{.*}}] stride %{{.*}} : tensor<128x64xbf16, #fa.fragment<warps = 4, mTiles = 2>>, memref<?xbf16>
// CHECK: fa.store_fragment %[[L]], %{{.*}}[%{{.*}}] rows[%{{.*}}, %{{.*}}] : tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2>>, memref<?xf32>
// GENERIC-LABEL: sym_name = "epilogue"
// GENERIC: "fa.convert_layout"(%{{.*}}) : (tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2, quadPartial = true>>) -> tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2>>
// GENERIC: "fa.store_fragment"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<128x64xbf16, #fa.fragment<warps = 4, mTiles = 2>>, memref<?xbf16>, index, index, index, index) -> ()
// GENERIC: "fa.store_fragment"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2>>, memref<?xf32>, index, index, index) -> ()
func.func @epilogue(%o: tensor<128x64xbf16, #row>, %partial: tensor<128xf32, #partial>,
                    %out: memref<?xbf16>, %lse: memref<?xf32>,
                    %base: index, %q0: index, %m: index, %stride: index) {
  %l = fa.convert_layout %partial : tensor<128xf32, #partial> -> tensor<128xf32, #row>
  fa.store_fragment %o, %out[%base] rows [%q0, %m] stride %stride : tensor<128x64xbf16, #row>, memref<?xbf16>
  fa.store_fragment %l, %lse[%base] rows [%q0, %m] : tensor<128xf32, #row>, memref<?xf32>
  return
}

// The L2 tile ops take the layouts unchanged: one step of the distributed
// loop as fa-gpu-distribute writes it (fa-gpu-distribute.mlir).
// CHECK-LABEL: func.func @distributed_step
// CHECK: %[[S:.*]] = fa.qk_scores %{{.*}}, %{{.*}} {log2_domain, scale = 1.250000e-01 : f32} : tensor<128x64xbf16, #fa.operand<warps = 4, mTiles = 2>>, tensor<64x64xbf16, #fa.shared<rowElements = 64>> -> tensor<128x64xf32, #fa.fragment<warps = 4, mTiles = 2, deferredScale = 0.180336878 : f32>>
// CHECK: %[[BM:.*]] = fa.row_max %[[S]] : tensor<128x64xf32, #fa.fragment<warps = 4, mTiles = 2, deferredScale = 0.180336878 : f32>> -> tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2>>
// CHECK: %[[P:.*]] = fa.exp_shifted %[[S]], %[[BM]] {base2} : tensor<128x64xf32, #fa.fragment<warps = 4, mTiles = 2, deferredScale = 0.180336878 : f32>>, tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2>> -> tensor<128x64xf32, #fa.fragment<warps = 4, mTiles = 2>>
// CHECK: fa.row_sum %[[P]] : tensor<128x64xf32, #fa.fragment<warps = 4, mTiles = 2>> -> tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2, quadPartial = true>>
// CHECK: fa.scale_rows %{{.*}}, %[[BM]] : tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2, quadPartial = true>>, tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2>>
func.func @distributed_step(%qa: tensor<128x64xbf16, #operand>, %k: tensor<64x64xbf16, #shared>,
                            %l: tensor<128xf32, #partial>)
    -> (tensor<128xf32, #partial>, tensor<128xf32, #partial>) {
  %s = fa.qk_scores %qa, %k {scale = 0.125 : f32, log2_domain}
      : tensor<128x64xbf16, #operand>, tensor<64x64xbf16, #shared> -> tensor<128x64xf32, #scores>
  %bm = fa.row_max %s : tensor<128x64xf32, #scores> -> tensor<128xf32, #row>
  %p = fa.exp_shifted %s, %bm {base2} : tensor<128x64xf32, #scores>, tensor<128xf32, #row> -> tensor<128x64xf32, #row>
  %rs = fa.row_sum %p : tensor<128x64xf32, #row> -> tensor<128xf32, #partial>
  %ls = fa.scale_rows %l, %bm : tensor<128xf32, #partial>, tensor<128xf32, #row>
  return %rs, %ls : tensor<128xf32, #partial>, tensor<128xf32, #partial>
}

// -----

// The backward's memory ops: rows and tiles read into the fragment layout,
// a fragment written to shared memory, an f32 fragment added into a buffer.
// CHECK-LABEL: func.func @backward_memory_ops
// CHECK: fa.load_fragment %{{.*}}[%{{.*}}] rows[%{{.*}}, %{{.*}}] padding 0x7F800000 : memref<?xf32> -> tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1>>
// CHECK: fa.load_fragment %{{.*}}[%{{.*}}] rows[%{{.*}}, %{{.*}}] padding 0x7F800000 predicated : memref<?xf32> -> tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1>>
// CHECK: fa.load_fragment %{{.*}}[%{{.*}}] rows[%{{.*}}, %{{.*}}] stride %{{.*}} padding 0.000000e+00 : memref<?xbf16> -> tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>
// CHECK: fa.store_shared %{{.*}}, %{{.*}} : tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>, memref<64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: fa.accumulate_fragment %{{.*}}, %{{.*}}[%{{.*}}] rows[%{{.*}}, %{{.*}}] stride %{{.*}} : tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>, memref<?xf32>
// And into 128-byte panels (sm_90a): 64 16-bit or 32 f32 columns each.
// CHECK: fa.store_shared %{{.*}}, %{{.*}} : tensor<64x128xbf16, #fa.fragment<warps = 4, mTiles = 1>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: fa.store_shared %{{.*}}, %{{.*}} : tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>, memref<2x64x32xf32, #gpu.address_space<workgroup>>
#frag = #fa.fragment<warps = 4, mTiles = 1>
func.func @backward_memory_ops(%lse: memref<?xf32>, %do: memref<?xbf16>, %acc: memref<?xf32>,
                               %smem: memref<64x64xbf16, #gpu.address_space<workgroup>>,
                               %panels: memref<2x64x64xbf16, #gpu.address_space<workgroup>>,
                               %staging: memref<2x64x32xf32, #gpu.address_space<workgroup>>,
                               %wide: tensor<64x128xbf16, #frag>,
                               %i: index, %s: index) {
  %rows = fa.load_fragment %lse[%i] rows [%i, %s] padding 0x7F800000 : memref<?xf32> -> tensor<64xf32, #frag>
  %ahead = fa.load_fragment %lse[%i] rows [%i, %s] padding 0x7F800000 predicated : memref<?xf32> -> tensor<64xf32, #frag>
  %t = fa.load_fragment %do[%i] rows [%i, %s] stride %s padding 0.0 : memref<?xbf16> -> tensor<64x64xbf16, #frag>
  fa.store_shared %t, %smem : tensor<64x64xbf16, #frag>, memref<64x64xbf16, #gpu.address_space<workgroup>>
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #frag>
  fa.accumulate_fragment %z, %acc[%i] rows [%i, %s] stride %s : tensor<64x64xf32, #frag>, memref<?xf32>
  fa.store_shared %wide, %panels : tensor<64x128xbf16, #frag>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>
  fa.store_shared %z, %staging : tensor<64x64xf32, #frag>, memref<2x64x32xf32, #gpu.address_space<workgroup>>
  return
}

// -----

// dq_acc in the MMA accumulator's lane order: written and read back.
// CHECK-LABEL: func.func @mma_blocks
// CHECK: fa.accumulate_fragment %{{.*}}, %{{.*}}[%{{.*}}] rows[%{{.*}}, %{{.*}}] stride %{{.*}} mma_blocks : tensor<64x64xf32
// CHECK: fa.load_fragment %{{.*}}[%{{.*}}] rows[%{{.*}}, %{{.*}}] stride %{{.*}} padding 0.000000e+00 mma_blocks : memref<?xf32> -> tensor<128x64xf32
func.func @mma_blocks(%t: tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>,
                      %acc: memref<?xf32>, %i: index) -> tensor<128x64xf32, #fa.fragment<warps = 8, mTiles = 1>> {
  fa.accumulate_fragment %t, %acc[%i] rows [%i, %i] stride %i mma_blocks
      : tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>, memref<?xf32>
  %r = fa.load_fragment %acc[%i] rows [%i, %i] stride %i padding 0.0 mma_blocks
      : memref<?xf32> -> tensor<128x64xf32, #fa.fragment<warps = 8, mTiles = 1>>
  return %r : tensor<128x64xf32, #fa.fragment<warps = 8, mTiles = 1>>
}

// -----

// The instruction ops: a shared-A wgmma onto zeros, a register-A one that
// accumulates, and the wait that carries the results.
// CHECK-LABEL: func.func @wgmma
// CHECK: %[[S:.+]]:4 = fa.wgmma a(desc %{{[^ ]+}} + 32) b(desc %{{[^ ]+}} + 0) {transpose_b} : bf16 -> f32, f32, f32, f32
// CHECK: %[[P:.+]]:4 = fa.wgmma a(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^ ]+}}) b(desc %{{[^ ]+}} + 16) acc(%[[S]]#0, %[[S]]#1, %[[S]]#2, %[[S]]#3) : f16 -> f32, f32, f32, f32
// CHECK: fa.wgmma_wait 0, %[[P]]#0, %[[P]]#1, %[[P]]#2, %[[P]]#3 : f32, f32, f32, f32
// GENERIC-LABEL: sym_name = "wgmma"
// GENERIC: "fa.wgmma"(%{{.*}}, %{{.*}}) <{a_offset = 32 : i64, b_offset = 0 : i64, input_type = bf16, operandSegmentSizes = array<i32: 1, 0, 1, 0>, transpose_b}> : (i64, i64) -> (f32, f32, f32, f32)
// GENERIC: "fa.wgmma_wait"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{pending = 0 : i64}> : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
func.func @wgmma(%da: i64, %db: i64, %r: i32) -> f32 {
  %s:4 = fa.wgmma a(desc %da + 32) b(desc %db + 0) {transpose_b} : bf16 -> f32, f32, f32, f32
  %p:4 = fa.wgmma a(%r, %r, %r, %r) b(desc %db + 16) acc(%s#0, %s#1, %s#2, %s#3) : f16 -> f32, f32, f32, f32
  %w:4 = fa.wgmma_wait 0, %p#0, %p#1, %p#2, %p#3 : f32, f32, f32, f32
  return %w#3 : f32
}
