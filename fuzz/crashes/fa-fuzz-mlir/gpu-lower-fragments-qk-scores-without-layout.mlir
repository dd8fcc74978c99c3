

// Softcap: S = softcap · tanh(scale · dot / softcap).
// CHECK-LABEL: func.func @softcap
// CHECK: arith.constant 2.500000e-02 : f32
// CHECK: math.tanh
// CHECK: arith.constant 2.000000e+01 : f32
func.func @softcap(%q: tensor<4x8xf16>, %k: tensor<2x8xf16>) -> tensor<4x2xf32> {
  %s = fa.qk_scores %q, %k {scale = 0.5 : f32, softcap = 20.0 : f32} : tensor<4x8xf16>, tensor<2x8xf16> -> tensor<4x2xf32>
  return %s : tensor<4x2xf32>
}

