

// Row max starts at -inf and uses maxnumf; dK += alpha · dSᵀ Q reads A transposed.
// CHECK-DAG: #[[$AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @reductions
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   arith.maxnumf
// CHECK: linalg.generic {indexing_maps = [#[[$AT]], #[[$B]], {{.*}}]
// CHECK:   arith.constant 1.250000e-01 : f32
func.func @reductions(%s: tensor<4x2xf32>, %q: tensor<4x8xbf16>, %dk: tensor<2x8xf32>) -> (tensor<4xf32>, tensor<2x8xf32>) {
  %m = fa.row_max %s : tensor<4x2xf32> -> tensor<4xf32>
  %dk1 = fa.matmul %s, %q, %dk {transpose_a, alpha = 0.125 : f32} : tensor<4x2xf32>, tensor<4x8xbf16>, tensor<2x8xf32>
  return %m, %dk1 : tensor<4xf32>, tensor<2x8xf32>
}

