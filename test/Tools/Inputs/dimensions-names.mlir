// Values named %dimensions / %permutation and the generic form's
// `permutation = array<...>` are not the hazard ParseGuard.h refuses.
func.func @f(%permutation: tensor<2x3xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %dimensions = "linalg.transpose"(%permutation, %c) <{permutation = array<i64: 1, 0>}> ({
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %dimensions : tensor<3x2xf32>
}
