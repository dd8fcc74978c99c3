// RUN: fa-opt %s --fa-raise-attention --verify-diagnostics | FileCheck %s

// Attention in f32 is attention, but no backend computes fa.attention in
// f32: it stays as it is, with a remark saying so.
// CHECK-LABEL: func.func @attention_in_f32
// CHECK-NOT: fa.attention
// CHECK: linalg.softmax
func.func @attention_in_f32(%q: tensor<8x128x64xf32>, %k: tensor<8x128x64xf32>, %v: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  %zero = arith.constant 0.0 : f32
  %kt_init = tensor.empty() : tensor<8x64x128xf32>
  %kt = linalg.transpose ins(%k : tensor<8x128x64xf32>) outs(%kt_init : tensor<8x64x128xf32>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<8x128x128xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x128x64xf32>, tensor<8x64x128xf32>) outs(%s_zero : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x128x128xf32>) outs(%s_init : tensor<8x128x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 0.125 : f32
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<8x128x128xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<8x128x128xf32>) outs(%s_init : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %o_init = tensor.empty() : tensor<8x128x64xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  // expected-remark @+1 {{fa-raise-attention: attention in f32 left as it is (fa.attention takes f16, bf16 or f8E4M3FN; no backend computes it in f32)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x128x128xf32>, tensor<8x128x64xf32>) outs(%o_zero : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}
