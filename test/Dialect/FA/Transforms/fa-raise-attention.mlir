// RUN: fa-opt %s --fa-raise-attention --canonicalize --cse --split-input-file | FileCheck %s

// fa-raise-attention: attention written in linalg on tensors becomes one
// fa.attention; near misses stay as they are.

// linalg.batch_matmul with K transposed by linalg.transpose, a scale
// multiplied in a generic's body, linalg.softmax; 3-D [B·H, S, D] operands
// as [B·H, 1, S, D].
// CHECK-LABEL: func.func @bmm_softmax_3d
// CHECK: %[[Q:.+]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2], [3]] output_shape [8, 1, 128, 64]
// CHECK: %[[K:.+]] = tensor.expand_shape %arg1
// CHECK: %[[V:.+]] = tensor.expand_shape %arg2
// CHECK: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f32} : (tensor<8x1x128x64xbf16>, tensor<8x1x128x64xbf16>, tensor<8x1x128x64xbf16>) -> tensor<8x1x128x64xbf16>
// CHECK: %[[R:.+]] = tensor.collapse_shape %[[O]] {{\[\[}}0, 1], [2], [3]]
// CHECK: return %[[R]]
// CHECK-NOT: linalg.
func.func @bmm_softmax_3d(%q: tensor<8x128x64xbf16>, %k: tensor<8x128x64xbf16>, %v: tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16> {
  %zero = arith.constant 0.0 : bf16
  %kt_init = tensor.empty() : tensor<8x64x128xbf16>
  %kt = linalg.transpose ins(%k : tensor<8x128x64xbf16>) outs(%kt_init : tensor<8x64x128xbf16>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<8x128x128xbf16>
  %s_zero = linalg.fill ins(%zero : bf16) outs(%s_init : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x128x64xbf16>, tensor<8x64x128xbf16>) outs(%s_zero : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x128x128xbf16>) outs(%s_init : tensor<8x128x128xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %c = arith.constant 0.125 : bf16
    %m = arith.mulf %in, %c : bf16
    linalg.yield %m : bf16
  } -> tensor<8x128x128xbf16>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<8x128x128xbf16>) outs(%s_init : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %o_init = tensor.empty() : tensor<8x128x64xbf16>
  %o_zero = linalg.fill ins(%zero : bf16) outs(%o_init : tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x128x128xbf16>, tensor<8x128x64xbf16>) outs(%o_zero : tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16>
  return %o : tensor<8x128x64xbf16>
}

// -----

// 4-D contractions as linalg.generic (K read transposed by its map), a
// divide by a splat constant, a constant causal mask broadcast over batch
// and heads, the softmax decomposed as MLIR's decomposition writes it.
// CHECK-LABEL: func.func @generic_decomposed_causal_4d
// CHECK-NEXT: %[[O:.+]] = fa.attention %arg0, %arg1, %arg2 {mask = #fa.mask<causal_top_left>, scale = 1.250000e-01 : f32} : (tensor<2x4x4x8xf16>, tensor<2x4x4x8xf16>, tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16>
// CHECK-NEXT: return %[[O]]
#q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mask2d = affine_map<(b, h, m, n) -> (m, n)>
#pv_p = affine_map<(b, h, m, d, n) -> (b, h, m, n)>
#pv_v = affine_map<(b, h, m, d, n) -> (b, h, n, d)>
#pv_o = affine_map<(b, h, m, d, n) -> (b, h, m, d)>
func.func @generic_decomposed_causal_4d(%q: tensor<2x4x4x8xf16>, %k: tensor<2x4x4x8xf16>, %v: tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16> {
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %mask = arith.constant dense<[[0.0, 0xFC00, 0xFC00, 0xFC00], [0.0, 0.0, 0xFC00, 0xFC00], [0.0, 0.0, 0.0, 0xFC00], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf16>
  %eight = arith.constant dense<8.0> : tensor<2x4x4x4xf16>
  %s_init = tensor.empty() : tensor<2x4x4x4xf16>
  %s_zero = linalg.fill ins(%zero : f16) outs(%s_init : tensor<2x4x4x4xf16>) -> tensor<2x4x4x4xf16>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x4x8xf16>, tensor<2x4x4x8xf16>) outs(%s_zero : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %p : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %scaled = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %eight : tensor<2x4x4x4xf16>, tensor<2x4x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %masked = linalg.generic {indexing_maps = [#id, #mask2d, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<2x4x4x4xf16>, tensor<4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.addf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %r_init = tensor.empty() : tensor<2x4x4xf16>
  %max_init = linalg.fill ins(%ninf : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<2x4x4x4xf16>) outs(%max_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.maxnumf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %d = arith.subf %a, %b : f16
    %e = math.exp %d : f16
    linalg.yield %e : f16
  } -> tensor<2x4x4x4xf16>
  %sum_init = linalg.fill ins(%zero : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<2x4x4x4xf16>) outs(%sum_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.addf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %o_init = tensor.empty() : tensor<2x4x4x8xf16>
  %o_zero = linalg.fill ins(%zero : f16) outs(%o_init : tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x4x4xf16>, tensor<2x4x4x8xf16>) outs(%o_zero : tensor<2x4x4x8xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %m = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %m : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x8xf16>
  return %o : tensor<2x4x4x8xf16>
}

// -----

// 2-D linalg.matmul (K transposed by its indexing maps), the causal mask
// built from linalg.index (select(j > i, -inf, 0)), no scale.
// CHECK-LABEL: func.func @matmul_iota_mask_2d
// CHECK: fa.attention {{.*}} {mask = #fa.mask<causal_top_left>, scale = 1.000000e+00 : f32} : (tensor<1x1x16x32xbf16>, tensor<1x1x16x32xbf16>, tensor<1x1x16x32xbf16>) -> tensor<1x1x16x32xbf16>
// CHECK-NOT: linalg.
#id2 = affine_map<(m, n) -> (m, n)>
func.func @matmul_iota_mask_2d(%q: tensor<16x32xbf16>, %k: tensor<16x32xbf16>, %v: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  %zero = arith.constant 0.0 : bf16
  %s_init = tensor.empty() : tensor<16x16xbf16>
  %s_zero = linalg.fill ins(%zero : bf16) outs(%s_init : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%q, %k : tensor<16x32xbf16>, tensor<16x32xbf16>) outs(%s_zero : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %masked = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<16x16xbf16>) outs(%s_init : tensor<16x16xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %later = arith.cmpi ugt, %j, %i : index
    %ninf = arith.constant 0xFF80 : bf16
    %z = arith.constant 0.0 : bf16
    %m = arith.select %later, %ninf, %z : bf16
    %r = arith.addf %a, %m : bf16
    linalg.yield %r : bf16
  } -> tensor<16x16xbf16>
  %p = linalg.softmax dimension(1) ins(%masked : tensor<16x16xbf16>) outs(%s_init : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %o_init = tensor.empty() : tensor<16x32xbf16>
  %o_zero = linalg.fill ins(%zero : bf16) outs(%o_init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %o = linalg.matmul ins(%p, %v : tensor<16x16xbf16>, tensor<16x32xbf16>) outs(%o_zero : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %o : tensor<16x32xbf16>
}

// -----

// M = 2 < N = 4: a bottom-right causal constant (key j hidden after
// i + N - M); the softmax from linalg.reduce, linalg.broadcast and the
// named linalg.sub / exp / div; Dv = 16 != D.
// CHECK-LABEL: func.func @bottom_right_unfused_3d
// CHECK: fa.attention {{.*}} {mask = #fa.mask<causal>, scale = 1.000000e+00 : f32} : (tensor<3x1x2x8xf16>, tensor<3x1x4x8xf16>, tensor<3x1x4x16xf16>) -> tensor<3x1x2x16xf16>
// CHECK-NOT: linalg.
#id3 = affine_map<(b, m, n) -> (b, m, n)>
#row3 = affine_map<(b, m, n) -> (b, m)>
func.func @bottom_right_unfused_3d(%q: tensor<3x2x8xf16>, %k: tensor<3x4x8xf16>, %v: tensor<3x4x16xf16>) -> tensor<3x2x16xf16> {
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %mask = arith.constant dense<[[[0.0, 0.0, 0.0, 0xFC00], [0.0, 0.0, 0.0, 0.0]]]> : tensor<1x2x4xf16>
  %s_init = tensor.empty() : tensor<3x2x4xf16>
  %s_zero = linalg.fill ins(%zero : f16) outs(%s_init : tensor<3x2x4xf16>) -> tensor<3x2x4xf16>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, d) -> (b, m, d)>, affine_map<(b, m, n, d) -> (b, n, d)>, affine_map<(b, m, n, d) -> (b, m, n)>] ins(%q, %k : tensor<3x2x8xf16>, tensor<3x4x8xf16>) outs(%s_zero : tensor<3x2x4xf16>) -> tensor<3x2x4xf16>
  %masked = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (0, m, n)>, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mask, %s : tensor<1x2x4xf16>, tensor<3x2x4xf16>) outs(%s_init : tensor<3x2x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.addf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<3x2x4xf16>
  %r_init = tensor.empty() : tensor<3x2xf16>
  %max_init = linalg.fill ins(%ninf : f16) outs(%r_init : tensor<3x2xf16>) -> tensor<3x2xf16>
  %max = linalg.reduce ins(%masked : tensor<3x2x4xf16>) outs(%max_init : tensor<3x2xf16>) dimensions = [2]
    (%a: f16, %acc: f16) {
      %r = arith.maximumf %a, %acc : f16
      linalg.yield %r : f16
    }
  %max_b = linalg.broadcast ins(%max : tensor<3x2xf16>) outs(%s_init : tensor<3x2x4xf16>) dimensions = [2]
  %shifted = linalg.sub ins(%masked, %max_b : tensor<3x2x4xf16>, tensor<3x2x4xf16>) outs(%s_init : tensor<3x2x4xf16>) -> tensor<3x2x4xf16>
  %exp = linalg.exp ins(%shifted : tensor<3x2x4xf16>) outs(%s_init : tensor<3x2x4xf16>) -> tensor<3x2x4xf16>
  %sum_init = linalg.fill ins(%zero : f16) outs(%r_init : tensor<3x2xf16>) -> tensor<3x2xf16>
  %sum = linalg.reduce ins(%exp : tensor<3x2x4xf16>) outs(%sum_init : tensor<3x2xf16>) dimensions = [2]
    (%a: f16, %acc: f16) {
      %r = arith.addf %a, %acc : f16
      linalg.yield %r : f16
    }
  %sum_b = linalg.broadcast ins(%sum : tensor<3x2xf16>) outs(%s_init : tensor<3x2x4xf16>) dimensions = [2]
  %p = linalg.div ins(%exp, %sum_b : tensor<3x2x4xf16>, tensor<3x2x4xf16>) outs(%s_init : tensor<3x2x4xf16>) -> tensor<3x2x4xf16>
  %o_init = tensor.empty() : tensor<3x2x16xf16>
  %o_zero = linalg.fill ins(%zero : f16) outs(%o_init : tensor<3x2x16xf16>) -> tensor<3x2x16xf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<3x2x4xf16>, tensor<3x4x16xf16>) outs(%o_zero : tensor<3x2x16xf16>) -> tensor<3x2x16xf16>
  return %o : tensor<3x2x16xf16>
}

// -----

// Near miss: the softmax normalises over the queries (dimension 1).
// CHECK-LABEL: func.func @near_miss_softmax_over_queries
// CHECK-NOT: fa.attention
// CHECK: linalg.softmax dimension(1)
func.func @near_miss_softmax_over_queries(%q: tensor<8x128x64xbf16>, %k: tensor<8x128x64xbf16>, %v: tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16> {
  %zero = arith.constant 0.0 : bf16
  %kt_init = tensor.empty() : tensor<8x64x128xbf16>
  %kt = linalg.transpose ins(%k : tensor<8x128x64xbf16>) outs(%kt_init : tensor<8x64x128xbf16>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<8x128x128xbf16>
  %s_zero = linalg.fill ins(%zero : bf16) outs(%s_init : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x128x64xbf16>, tensor<8x64x128xbf16>) outs(%s_zero : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x128x128xbf16>) outs(%s_init : tensor<8x128x128xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %c = arith.constant 0.125 : bf16
    %m = arith.mulf %in, %c : bf16
    linalg.yield %m : bf16
  } -> tensor<8x128x128xbf16>
  %p = linalg.softmax dimension(1) ins(%scaled : tensor<8x128x128xbf16>) outs(%s_init : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %o_init = tensor.empty() : tensor<8x128x64xbf16>
  %o_zero = linalg.fill ins(%zero : bf16) outs(%o_init : tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x128x128xbf16>, tensor<8x128x64xbf16>) outs(%o_zero : tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16>
  return %o : tensor<8x128x64xbf16>
}

// -----

// Near miss: the mask hides the keys before the query (j < i): not causal.
// CHECK-LABEL: func.func @near_miss_mask_not_causal
// CHECK-NOT: fa.attention
// CHECK: linalg.softmax
#id2 = affine_map<(m, n) -> (m, n)>
func.func @near_miss_mask_not_causal(%q: tensor<16x32xbf16>, %k: tensor<16x32xbf16>, %v: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  %zero = arith.constant 0.0 : bf16
  %s_init = tensor.empty() : tensor<16x16xbf16>
  %s_zero = linalg.fill ins(%zero : bf16) outs(%s_init : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%q, %k : tensor<16x32xbf16>, tensor<16x32xbf16>) outs(%s_zero : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %masked = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<16x16xbf16>) outs(%s_init : tensor<16x16xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %later = arith.cmpi ult, %j, %i : index
    %ninf = arith.constant 0xFF80 : bf16
    %z = arith.constant 0.0 : bf16
    %m = arith.select %later, %ninf, %z : bf16
    %r = arith.addf %a, %m : bf16
    linalg.yield %r : bf16
  } -> tensor<16x16xbf16>
  %p = linalg.softmax dimension(1) ins(%masked : tensor<16x16xbf16>) outs(%s_init : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %o_init = tensor.empty() : tensor<16x32xbf16>
  %o_zero = linalg.fill ins(%zero : bf16) outs(%o_init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %o = linalg.matmul ins(%p, %v : tensor<16x16xbf16>, tensor<16x32xbf16>) outs(%o_zero : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %o : tensor<16x32xbf16>
}

// -----

// Near miss: a constant mask hiding one key too many (neither alignment).
// CHECK-LABEL: func.func @near_miss_constant_mask_not_causal
// CHECK-NOT: fa.attention
// CHECK: linalg.batch_matmul
#id3 = affine_map<(b, m, n) -> (b, m, n)>
#row3 = affine_map<(b, m, n) -> (b, m)>
func.func @near_miss_constant_mask_not_causal(%q: tensor<3x2x8xf16>, %k: tensor<3x4x8xf16>, %v: tensor<3x4x16xf16>) -> tensor<3x2x16xf16> {
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %mask = arith.constant dense<[[[0.0, 0.0, 0xFC00, 0xFC00], [0.0, 0.0, 0.0, 0.0]]]> : tensor<1x2x4xf16>
  %s_init = tensor.empty() : tensor<3x2x4xf16>
  %s_zero = linalg.fill ins(%zero : f16) outs(%s_init : tensor<3x2x4xf16>) -> tensor<3x2x4xf16>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, d) -> (b, m, d)>, affine_map<(b, m, n, d) -> (b, n, d)>, affine_map<(b, m, n, d) -> (b, m, n)>] ins(%q, %k : tensor<3x2x8xf16>, tensor<3x4x8xf16>) outs(%s_zero : tensor<3x2x4xf16>) -> tensor<3x2x4xf16>
  %masked = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (0, m, n)>, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mask, %s : tensor<1x2x4xf16>, tensor<3x2x4xf16>) outs(%s_init : tensor<3x2x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.addf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<3x2x4xf16>
  %r_init = tensor.empty() : tensor<3x2xf16>
  %max_init = linalg.fill ins(%ninf : f16) outs(%r_init : tensor<3x2xf16>) -> tensor<3x2xf16>
  %max = linalg.reduce ins(%masked : tensor<3x2x4xf16>) outs(%max_init : tensor<3x2xf16>) dimensions = [2]
    (%a: f16, %acc: f16) {
      %r = arith.maximumf %a, %acc : f16
      linalg.yield %r : f16
    }
  %max_b = linalg.broadcast ins(%max : tensor<3x2xf16>) outs(%s_init : tensor<3x2x4xf16>) dimensions = [2]
  %shifted = linalg.sub ins(%masked, %max_b : tensor<3x2x4xf16>, tensor<3x2x4xf16>) outs(%s_init : tensor<3x2x4xf16>) -> tensor<3x2x4xf16>
  %exp = linalg.exp ins(%shifted : tensor<3x2x4xf16>) outs(%s_init : tensor<3x2x4xf16>) -> tensor<3x2x4xf16>
  %sum_init = linalg.fill ins(%zero : f16) outs(%r_init : tensor<3x2xf16>) -> tensor<3x2xf16>
  %sum = linalg.reduce ins(%exp : tensor<3x2x4xf16>) outs(%sum_init : tensor<3x2xf16>) dimensions = [2]
    (%a: f16, %acc: f16) {
      %r = arith.addf %a, %acc : f16
      linalg.yield %r : f16
    }
  %sum_b = linalg.broadcast ins(%sum : tensor<3x2xf16>) outs(%s_init : tensor<3x2x4xf16>) dimensions = [2]
  %p = linalg.div ins(%exp, %sum_b : tensor<3x2x4xf16>, tensor<3x2x4xf16>) outs(%s_init : tensor<3x2x4xf16>) -> tensor<3x2x4xf16>
  %o_init = tensor.empty() : tensor<3x2x16xf16>
  %o_zero = linalg.fill ins(%zero : f16) outs(%o_init : tensor<3x2x16xf16>) -> tensor<3x2x16xf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<3x2x4xf16>, tensor<3x4x16xf16>) outs(%o_zero : tensor<3x2x16xf16>) -> tensor<3x2x16xf16>
  return %o : tensor<3x2x16xf16>
}

// -----

// Near miss: the scale is a function argument, not a constant.
// CHECK-LABEL: func.func @near_miss_scale_not_constant
// CHECK-NOT: fa.attention
// CHECK: linalg.softmax
func.func @near_miss_scale_not_constant(%q: tensor<8x128x64xbf16>, %k: tensor<8x128x64xbf16>, %v: tensor<8x128x64xbf16>, %c: bf16) -> tensor<8x128x64xbf16> {
  %zero = arith.constant 0.0 : bf16
  %kt_init = tensor.empty() : tensor<8x64x128xbf16>
  %kt = linalg.transpose ins(%k : tensor<8x128x64xbf16>) outs(%kt_init : tensor<8x64x128xbf16>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<8x128x128xbf16>
  %s_zero = linalg.fill ins(%zero : bf16) outs(%s_init : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x128x64xbf16>, tensor<8x64x128xbf16>) outs(%s_zero : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x128x128xbf16>) outs(%s_init : tensor<8x128x128xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %m = arith.mulf %in, %c : bf16
    linalg.yield %m : bf16
  } -> tensor<8x128x128xbf16>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<8x128x128xbf16>) outs(%s_init : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %o_init = tensor.empty() : tensor<8x128x64xbf16>
  %o_zero = linalg.fill ins(%zero : bf16) outs(%o_init : tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x128x128xbf16>, tensor<8x128x64xbf16>) outs(%o_zero : tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16>
  return %o : tensor<8x128x64xbf16>
}

// -----

// Near miss: P·V accumulates into ones, not zeros.
// CHECK-LABEL: func.func @near_miss_accumulator_not_zero
// CHECK-NOT: fa.attention
// CHECK: linalg.softmax
func.func @near_miss_accumulator_not_zero(%q: tensor<8x128x64xbf16>, %k: tensor<8x128x64xbf16>, %v: tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16> {
  %zero = arith.constant 0.0 : bf16
  %kt_init = tensor.empty() : tensor<8x64x128xbf16>
  %kt = linalg.transpose ins(%k : tensor<8x128x64xbf16>) outs(%kt_init : tensor<8x64x128xbf16>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<8x128x128xbf16>
  %s_zero = linalg.fill ins(%zero : bf16) outs(%s_init : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x128x64xbf16>, tensor<8x64x128xbf16>) outs(%s_zero : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x128x128xbf16>) outs(%s_init : tensor<8x128x128xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %c = arith.constant 0.125 : bf16
    %m = arith.mulf %in, %c : bf16
    linalg.yield %m : bf16
  } -> tensor<8x128x128xbf16>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<8x128x128xbf16>) outs(%s_init : tensor<8x128x128xbf16>) -> tensor<8x128x128xbf16>
  %o_init = tensor.empty() : tensor<8x128x64xbf16>
  %one = arith.constant 1.0 : bf16
  %o_zero = linalg.fill ins(%one : bf16) outs(%o_init : tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x128x128xbf16>, tensor<8x128x64xbf16>) outs(%o_zero : tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16>
  return %o : tensor<8x128x64xbf16>
}

// -----

// Near miss: the decomposed softmax adds the row max instead of
// subtracting it.
// CHECK-LABEL: func.func @near_miss_no_max_subtracted
// CHECK-NOT: fa.attention
// CHECK: math.exp
#q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mask2d = affine_map<(b, h, m, n) -> (m, n)>
#pv_p = affine_map<(b, h, m, d, n) -> (b, h, m, n)>
#pv_v = affine_map<(b, h, m, d, n) -> (b, h, n, d)>
#pv_o = affine_map<(b, h, m, d, n) -> (b, h, m, d)>
func.func @near_miss_no_max_subtracted(%q: tensor<2x4x4x8xf16>, %k: tensor<2x4x4x8xf16>, %v: tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16> {
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %mask = arith.constant dense<[[0.0, 0xFC00, 0xFC00, 0xFC00], [0.0, 0.0, 0xFC00, 0xFC00], [0.0, 0.0, 0.0, 0xFC00], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf16>
  %eight = arith.constant dense<8.0> : tensor<2x4x4x4xf16>
  %s_init = tensor.empty() : tensor<2x4x4x4xf16>
  %s_zero = linalg.fill ins(%zero : f16) outs(%s_init : tensor<2x4x4x4xf16>) -> tensor<2x4x4x4xf16>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x4x8xf16>, tensor<2x4x4x8xf16>) outs(%s_zero : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %p : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %scaled = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %eight : tensor<2x4x4x4xf16>, tensor<2x4x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %masked = linalg.generic {indexing_maps = [#id, #mask2d, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<2x4x4x4xf16>, tensor<4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.addf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %r_init = tensor.empty() : tensor<2x4x4xf16>
  %max_init = linalg.fill ins(%ninf : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<2x4x4x4xf16>) outs(%max_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.maxnumf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %d = arith.addf %a, %b : f16
    %e = math.exp %d : f16
    linalg.yield %e : f16
  } -> tensor<2x4x4x4xf16>
  %sum_init = linalg.fill ins(%zero : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<2x4x4x4xf16>) outs(%sum_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.addf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %o_init = tensor.empty() : tensor<2x4x4x8xf16>
  %o_zero = linalg.fill ins(%zero : f16) outs(%o_init : tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x4x4xf16>, tensor<2x4x4x8xf16>) outs(%o_zero : tensor<2x4x4x8xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %m = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %m : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x8xf16>
  return %o : tensor<2x4x4x8xf16>
}

// -----

// GQA: K and V [B, Hkv, N, D] broadcast over the two heads of each group
// (linalg.broadcast of dimension 2, V through a unit expansion) and
// collapsed to [B, Hq, N, D]: fa.attention reads the KV heads itself.
// CHECK-LABEL: func.func @gqa_broadcast_4d
// CHECK: fa.attention %arg0, %arg1, %arg2 {mask = #fa.mask<causal_top_left>, scale = 1.250000e-01 : f32} : (tensor<2x4x4x8xf16>, tensor<2x2x4x8xf16>, tensor<2x2x4x8xf16>) -> tensor<2x4x4x8xf16>
// CHECK-NOT: linalg.
#q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mask2d = affine_map<(b, h, m, n) -> (m, n)>
#pv_p = affine_map<(b, h, m, d, n) -> (b, h, m, n)>
#pv_v = affine_map<(b, h, m, d, n) -> (b, h, n, d)>
#pv_o = affine_map<(b, h, m, d, n) -> (b, h, m, d)>
func.func @gqa_broadcast_4d(%q: tensor<2x4x4x8xf16>, %k2: tensor<2x2x4x8xf16>, %v2: tensor<2x2x4x8xf16>) -> tensor<2x4x4x8xf16> {
  %kb_init = tensor.empty() : tensor<2x2x2x4x8xf16>
  %kb = linalg.broadcast ins(%k2 : tensor<2x2x4x8xf16>) outs(%kb_init : tensor<2x2x2x4x8xf16>) dimensions = [2]
  %k = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x2x4x8xf16> into tensor<2x4x4x8xf16>
  %v1 = tensor.expand_shape %v2 [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 4, 8] : tensor<2x2x4x8xf16> into tensor<2x2x1x4x8xf16>
  %vb_init = tensor.empty() : tensor<2x2x2x4x8xf16>
  %v1c = tensor.collapse_shape %v1 [[0], [1], [2, 3], [4]] : tensor<2x2x1x4x8xf16> into tensor<2x2x4x8xf16>
  %vb = linalg.broadcast ins(%v1c : tensor<2x2x4x8xf16>) outs(%vb_init : tensor<2x2x2x4x8xf16>) dimensions = [2]
  %v = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x2x2x4x8xf16> into tensor<2x4x4x8xf16>
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %mask = arith.constant dense<[[0.0, 0xFC00, 0xFC00, 0xFC00], [0.0, 0.0, 0xFC00, 0xFC00], [0.0, 0.0, 0.0, 0xFC00], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf16>
  %eight = arith.constant dense<8.0> : tensor<2x4x4x4xf16>
  %s_init = tensor.empty() : tensor<2x4x4x4xf16>
  %s_zero = linalg.fill ins(%zero : f16) outs(%s_init : tensor<2x4x4x4xf16>) -> tensor<2x4x4x4xf16>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x4x8xf16>, tensor<2x4x4x8xf16>) outs(%s_zero : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %p : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %scaled = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %eight : tensor<2x4x4x4xf16>, tensor<2x4x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %masked = linalg.generic {indexing_maps = [#id, #mask2d, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<2x4x4x4xf16>, tensor<4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.addf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %r_init = tensor.empty() : tensor<2x4x4xf16>
  %max_init = linalg.fill ins(%ninf : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<2x4x4x4xf16>) outs(%max_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.maxnumf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %d = arith.subf %a, %b : f16
    %e = math.exp %d : f16
    linalg.yield %e : f16
  } -> tensor<2x4x4x4xf16>
  %sum_init = linalg.fill ins(%zero : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<2x4x4x4xf16>) outs(%sum_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.addf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %o_init = tensor.empty() : tensor<2x4x4x8xf16>
  %o_zero = linalg.fill ins(%zero : f16) outs(%o_init : tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x4x4xf16>, tensor<2x4x4x8xf16>) outs(%o_zero : tensor<2x4x4x8xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %m = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %m : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x8xf16>
  return %o : tensor<2x4x4x8xf16>
}

// -----

// Only K broadcast (V has all query heads): raised as MHA on the
// broadcast K, which is still [B, Hq, N, D].
// CHECK-LABEL: func.func @gqa_key_only_stays_mha
// CHECK: %[[K:.+]] = tensor.collapse_shape
// CHECK: fa.attention %arg0, %[[K]], %arg3 {{.*}} : (tensor<2x4x4x8xf16>, tensor<2x4x4x8xf16>, tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16>
#q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mask2d = affine_map<(b, h, m, n) -> (m, n)>
#pv_p = affine_map<(b, h, m, d, n) -> (b, h, m, n)>
#pv_v = affine_map<(b, h, m, d, n) -> (b, h, n, d)>
#pv_o = affine_map<(b, h, m, d, n) -> (b, h, m, d)>
func.func @gqa_key_only_stays_mha(%q: tensor<2x4x4x8xf16>, %k2: tensor<2x2x4x8xf16>, %v2: tensor<2x2x4x8xf16>, %vfull: tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16> {
  %kb_init = tensor.empty() : tensor<2x2x2x4x8xf16>
  %kb = linalg.broadcast ins(%k2 : tensor<2x2x4x8xf16>) outs(%kb_init : tensor<2x2x2x4x8xf16>) dimensions = [2]
  %k = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x2x4x8xf16> into tensor<2x4x4x8xf16>
  %v1 = tensor.expand_shape %v2 [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 4, 8] : tensor<2x2x4x8xf16> into tensor<2x2x1x4x8xf16>
  %vb_init = tensor.empty() : tensor<2x2x2x4x8xf16>
  %v1c = tensor.collapse_shape %v1 [[0], [1], [2, 3], [4]] : tensor<2x2x1x4x8xf16> into tensor<2x2x4x8xf16>
  %vb = linalg.broadcast ins(%v1c : tensor<2x2x4x8xf16>) outs(%vb_init : tensor<2x2x2x4x8xf16>) dimensions = [2]
  %v = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x2x2x4x8xf16> into tensor<2x4x4x8xf16>
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %mask = arith.constant dense<[[0.0, 0xFC00, 0xFC00, 0xFC00], [0.0, 0.0, 0xFC00, 0xFC00], [0.0, 0.0, 0.0, 0xFC00], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf16>
  %eight = arith.constant dense<8.0> : tensor<2x4x4x4xf16>
  %s_init = tensor.empty() : tensor<2x4x4x4xf16>
  %s_zero = linalg.fill ins(%zero : f16) outs(%s_init : tensor<2x4x4x4xf16>) -> tensor<2x4x4x4xf16>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x4x8xf16>, tensor<2x4x4x8xf16>) outs(%s_zero : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %p : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %scaled = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %eight : tensor<2x4x4x4xf16>, tensor<2x4x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %masked = linalg.generic {indexing_maps = [#id, #mask2d, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<2x4x4x4xf16>, tensor<4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.addf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %r_init = tensor.empty() : tensor<2x4x4xf16>
  %max_init = linalg.fill ins(%ninf : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<2x4x4x4xf16>) outs(%max_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.maxnumf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %d = arith.subf %a, %b : f16
    %e = math.exp %d : f16
    linalg.yield %e : f16
  } -> tensor<2x4x4x4xf16>
  %sum_init = linalg.fill ins(%zero : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<2x4x4x4xf16>) outs(%sum_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.addf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %o_init = tensor.empty() : tensor<2x4x4x8xf16>
  %o_zero = linalg.fill ins(%zero : f16) outs(%o_init : tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %vfull : tensor<2x4x4x4xf16>, tensor<2x4x4x8xf16>) outs(%o_zero : tensor<2x4x4x8xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %m = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %m : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x8xf16>
  return %o : tensor<2x4x4x8xf16>
}

// -----

// The causal mask as a tensor of its own, built from linalg.index (as
// StableHLO's iota and compare lower), added with a broadcast.
// CHECK-LABEL: func.func @iota_mask_tensor_4d
// CHECK: fa.attention %arg0, %arg1, %arg2 {mask = #fa.mask<causal_top_left>, scale = 1.250000e-01 : f32}
// CHECK-NOT: linalg.
#q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mask2d = affine_map<(b, h, m, n) -> (m, n)>
#pv_p = affine_map<(b, h, m, d, n) -> (b, h, m, n)>
#pv_v = affine_map<(b, h, m, d, n) -> (b, h, n, d)>
#pv_o = affine_map<(b, h, m, d, n) -> (b, h, m, d)>
func.func @iota_mask_tensor_4d(%q: tensor<2x4x4x8xf16>, %k: tensor<2x4x4x8xf16>, %v: tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16> {
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %mask_init = tensor.empty() : tensor<4x4xf16>
  %mask = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} outs(%mask_init : tensor<4x4xf16>) {
  ^bb0(%o: f16):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %later = arith.cmpi sgt, %j, %i : index
    %hidden = arith.constant 0xFC00 : f16
    %shown = arith.constant 0.0 : f16
    %m = arith.select %later, %hidden, %shown : f16
    linalg.yield %m : f16
  } -> tensor<4x4xf16>
  %eight = arith.constant dense<8.0> : tensor<2x4x4x4xf16>
  %s_init = tensor.empty() : tensor<2x4x4x4xf16>
  %s_zero = linalg.fill ins(%zero : f16) outs(%s_init : tensor<2x4x4x4xf16>) -> tensor<2x4x4x4xf16>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x4x8xf16>, tensor<2x4x4x8xf16>) outs(%s_zero : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %p : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %scaled = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %eight : tensor<2x4x4x4xf16>, tensor<2x4x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %masked = linalg.generic {indexing_maps = [#id, #mask2d, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<2x4x4x4xf16>, tensor<4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.addf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %r_init = tensor.empty() : tensor<2x4x4xf16>
  %max_init = linalg.fill ins(%ninf : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<2x4x4x4xf16>) outs(%max_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.maxnumf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %d = arith.subf %a, %b : f16
    %e = math.exp %d : f16
    linalg.yield %e : f16
  } -> tensor<2x4x4x4xf16>
  %sum_init = linalg.fill ins(%zero : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<2x4x4x4xf16>) outs(%sum_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.addf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %o_init = tensor.empty() : tensor<2x4x4x8xf16>
  %o_zero = linalg.fill ins(%zero : f16) outs(%o_init : tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x4x4xf16>, tensor<2x4x4x8xf16>) outs(%o_zero : tensor<2x4x4x8xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %m = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %m : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x8xf16>
  return %o : tensor<2x4x4x8xf16>
}

// -----

// Near miss: the mask tensor also hides the diagonal (j >= i).
// CHECK-LABEL: func.func @near_miss_mask_tensor_hides_diagonal
// CHECK-NOT: fa.attention
// CHECK: arith.cmpi sge
#q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mask2d = affine_map<(b, h, m, n) -> (m, n)>
#pv_p = affine_map<(b, h, m, d, n) -> (b, h, m, n)>
#pv_v = affine_map<(b, h, m, d, n) -> (b, h, n, d)>
#pv_o = affine_map<(b, h, m, d, n) -> (b, h, m, d)>
func.func @near_miss_mask_tensor_hides_diagonal(%q: tensor<2x4x4x8xf16>, %k: tensor<2x4x4x8xf16>, %v: tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16> {
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %mask_init = tensor.empty() : tensor<4x4xf16>
  %mask = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} outs(%mask_init : tensor<4x4xf16>) {
  ^bb0(%o: f16):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %later = arith.cmpi sge, %j, %i : index
    %hidden = arith.constant 0xFC00 : f16
    %shown = arith.constant 0.0 : f16
    %m = arith.select %later, %hidden, %shown : f16
    linalg.yield %m : f16
  } -> tensor<4x4xf16>
  %eight = arith.constant dense<8.0> : tensor<2x4x4x4xf16>
  %s_init = tensor.empty() : tensor<2x4x4x4xf16>
  %s_zero = linalg.fill ins(%zero : f16) outs(%s_init : tensor<2x4x4x4xf16>) -> tensor<2x4x4x4xf16>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x4x8xf16>, tensor<2x4x4x8xf16>) outs(%s_zero : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %p : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %scaled = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %eight : tensor<2x4x4x4xf16>, tensor<2x4x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %masked = linalg.generic {indexing_maps = [#id, #mask2d, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<2x4x4x4xf16>, tensor<4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.addf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %r_init = tensor.empty() : tensor<2x4x4xf16>
  %max_init = linalg.fill ins(%ninf : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<2x4x4x4xf16>) outs(%max_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.maxnumf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %d = arith.subf %a, %b : f16
    %e = math.exp %d : f16
    linalg.yield %e : f16
  } -> tensor<2x4x4x4xf16>
  %sum_init = linalg.fill ins(%zero : f16) outs(%r_init : tensor<2x4x4xf16>) -> tensor<2x4x4xf16>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<2x4x4x4xf16>) outs(%sum_init : tensor<2x4x4xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.addf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4xf16>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<2x4x4x4xf16>, tensor<2x4x4xf16>) outs(%s_init : tensor<2x4x4x4xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.divf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x4xf16>
  %o_init = tensor.empty() : tensor<2x4x4x8xf16>
  %o_zero = linalg.fill ins(%zero : f16) outs(%o_init : tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x4x4xf16>, tensor<2x4x4x8xf16>) outs(%o_zero : tensor<2x4x4x8xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %m = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %m : f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x8xf16>
  return %o : tensor<2x4x4x8xf16>
}
