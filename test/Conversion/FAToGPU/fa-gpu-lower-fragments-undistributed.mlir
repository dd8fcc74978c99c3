// fa-gpu-lower-fragments lowers only what fa-gpu-distribute placed in a
// kernel (tiles with #fa.fragment / #fa.shared / #fa.operand layouts). Plain
// L2 tile ops, or an fa.attention that was never tiled, get one diagnostic
// naming the passes to run first, never a crash (found by fa-fuzz-mlir:
// fuzz/crashes/fa-fuzz-mlir/).
// RUN: not fa-opt %s --split-input-file --fa-gpu-lower-fragments 2>&1 | FileCheck %s

// CHECK: error: fa-gpu-lower-fragments: 'fa.qk_scores' has tiles without a GPU layout: run fa-tile, fa-fuse-online-softmax and fa-gpu-distribute first
func.func @scores(%q: tensor<4x8xf16>, %k: tensor<2x8xf16>) -> tensor<4x2xf32> {
  %s = fa.qk_scores %q, %k {scale = 0.5 : f32, softcap = 20.0 : f32} : tensor<4x8xf16>, tensor<2x8xf16> -> tensor<4x2xf32>
  return %s : tensor<4x2xf32>
}

// -----

// CHECK: error: fa-gpu-lower-fragments: 'fa.alibi_bias' has tiles without a GPU layout
func.func @bias(%s: tensor<4x2xf32>, %slope: f32, %i: index) -> tensor<4x2xf32> {
  %b = fa.alibi_bias %s, %slope at [%i, %i] in [%i, %i] {log2_domain} : tensor<4x2xf32>
  return %b : tensor<4x2xf32>
}

// -----

// CHECK: error: fa-gpu-lower-fragments: 'fa.row_max' has tiles without a GPU layout
func.func @row_max(%s: tensor<4x2xf32>) -> tensor<4xf32> {
  %m = fa.row_max %s : tensor<4x2xf32> -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// CHECK: error: fa-gpu-lower-fragments: 'fa.attention' has tiles without a GPU layout
func.func @untiled(%q: tensor<1x1x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %v: tensor<1x1x64x64xbf16>) -> tensor<1x1x64x64xbf16> {
  %o = fa.attention %q, %k, %v : (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>) -> tensor<1x1x64x64xbf16>
  return %o : tensor<1x1x64x64xbf16>
}

// -----

// Tiles with a GPU layout passed into or out of a function: fa-gpu-distribute
// never does that (they are one thread's registers, or a view of the
// block's shared memory), and the conversion used to fail with "failed to
// legalize operation 'func.return'" or an unresolved materialization.
// CHECK: error: fa-gpu-lower-fragments: 'func.func' passes tiles with a GPU layout into or out of a function: they live inside one kernel, as fa-gpu-distribute places them
func.func @boundary(%t: tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>,
                    %acc: memref<?xf32>, %i: index) {
  fa.accumulate_fragment %t, %acc[%i] rows [%i, %i] stride %i
      : tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>, memref<?xf32>
  return
}

// -----

// fa-gpu-distribute itself names what is missing.
// RUN: not fa-opt %s --split-input-file --fa-gpu-distribute 2>&1 | FileCheck %s --check-prefix=DIST
// DIST: error: fa-gpu-distribute: run fa-tile and fa-fuse-online-softmax first
func.func @untiled_distribute(%q: tensor<1x1x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %v: tensor<1x1x64x64xbf16>) -> tensor<1x1x64x64xbf16> {
  %o = fa.attention %q, %k, %v : (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>) -> tensor<1x1x64x64xbf16>
  return %o : tensor<1x1x64x64xbf16>
}
