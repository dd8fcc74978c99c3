// The check can fire: untiled attention, and unbounded dynamic shapes.
// RUN: fa-opt %s --split-input-file --verify-diagnostics \
// RUN:   --fa-check-no-quadratic-buffers="query-len=1000 key-len=1500"

// Standard attention materialises S = QKᵀ: the check must reject it.
func.func @standard(%q: tensor<1000x64xf32>, %k: tensor<64x1500xf32>) -> tensor<1000x1500xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{value of type 'tensor<1000x1500xf32>' can hold an M x N matrix (dimension 0 reaches M = 1000, dimension 1 reaches N = 1500)}}
  %empty = tensor.empty() : tensor<1000x1500xf32>
  // expected-error @+1 {{value of type 'tensor<1000x1500xf32>' can hold an M x N matrix}}
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1000x1500xf32>) -> tensor<1000x1500xf32>
  // expected-error @+1 {{value of type 'tensor<1000x1500xf32>' can hold an M x N matrix}}
  %s = linalg.matmul ins(%q, %k : tensor<1000x64xf32>, tensor<64x1500xf32>) outs(%init : tensor<1000x1500xf32>) -> tensor<1000x1500xf32>
  return %s : tensor<1000x1500xf32>
}

// -----

// A dynamic dimension with no bound counts as able to reach both.
func.func @unbounded(%n: index) -> tensor<?x?xf32> {
  // expected-error @+1 {{value of type 'tensor<?x?xf32>' can hold an M x N matrix}}
  %empty = tensor.empty(%n, %n) : tensor<?x?xf32>
  return %empty : tensor<?x?xf32>
}
