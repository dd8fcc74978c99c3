// RUN: fa-opt %s --convert-fa-tile-to-linalg --split-input-file | FileCheck %s

// S = log2(e) · scale · Q Kᵀ: a contraction over D, then one multiply by the
// folded constant 0.5 · log2(e) = 0.72134751.
// CHECK-DAG: #[[$QMAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$KMAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$SMAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @scores_mask_exp
// CHECK: %[[DOT:.*]] = linalg.generic {indexing_maps = [#[[$QMAP]], #[[$KMAP]], #[[$SMAP]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK:   arith.extf %{{.*}} : bf16 to f32
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[DOT]]
// CHECK:   arith.constant 0.72134751 : f32
// Causal mask: key k0 + j visible to query q0 + i iff j < N and k0 + j <= q0 + i + N - M.
// CHECK: %[[SM:.*]] = linalg.generic {{.*}} ins(%[[S]]
// CHECK:   linalg.index 0
// CHECK:   linalg.index 1
// CHECK:   arith.cmpi slt
// CHECK:   arith.cmpi sle
// CHECK:   arith.andi
// CHECK:   arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// P = exp2(S - m[i]) with m broadcast along the row; exactly 0 where S = -inf.
// CHECK: linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[SM]], %{{.*}} : tensor<4x2xf32>, tensor<4xf32>)
// CHECK:   %[[DIFF:.*]] = arith.subf
// CHECK:   %[[E:.*]] = math.exp2 %[[DIFF]]
// CHECK:   %[[MASKED:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}}
// CHECK:   arith.select %[[MASKED]], %{{.*}}, %[[E]]
func.func @scores_mask_exp(%q: tensor<4x8xbf16>, %k: tensor<2x8xbf16>, %i: index, %n: index, %m: tensor<4xf32>) -> tensor<4x2xf32> {
  %s = fa.qk_scores %q, %k {scale = 0.5 : f32, log2_domain} : tensor<4x8xbf16>, tensor<2x8xbf16> -> tensor<4x2xf32>
  %sm = fa.apply_mask %s, #fa.mask<causal> at [%i, %i] in [%n, %n] : tensor<4x2xf32>
  %p = fa.exp_shifted %sm, %m {base2} : tensor<4x2xf32>, tensor<4xf32>
  return %p : tensor<4x2xf32>
}

// -----

// Softcap: S = softcap · tanh(scale · dot / softcap).
// CHECK-LABEL: func.func @softcap
// CHECK: arith.constant 2.500000e-02 : f32
// CHECK: math.tanh
// CHECK: arith.constant 2.000000e+01 : f32
func.func @softcap(%q: tensor<4x8xf16>, %k: tensor<2x8xf16>) -> tensor<4x2xf32> {
  %s = fa.qk_scores %q, %k {scale = 0.5 : f32, softcap = 20.0 : f32} : tensor<4x8xf16>, tensor<2x8xf16> -> tensor<4x2xf32>
  return %s : tensor<4x2xf32>
}

// -----

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

// -----

// ALiBi: S[i, j] - c·slope·|q0 + i + (N - M) - (k0 + j)|, with c = log2(e)
// in log2 units; one elementwise generic reading its position off
// linalg.index, the distance an integer until the final conversion.
// CHECK-LABEL: func.func @alibi_bias
// CHECK-SAME: (%[[S:[^:]+]]: tensor<4x2xf32>, %[[SLOPE:[^:]+]]: f32, %[[Q0:[^:]+]]: index, %[[K0:[^:]+]]: index, %[[M:[^:]+]]: index, %[[N:[^:]+]]: index)
// c·slope once per tile:
// CHECK: %[[C:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[CSLOPE:.*]] = arith.mulf %[[SLOPE]], %[[C]] : f32
// Bottom-right alignment N - M:
// CHECK: %[[ALIGN:.*]] = arith.subi %[[N]], %[[M]] : index
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<4x2xf32>)
// CHECK: ^bb0(%[[X:[^:]+]]: f32
// CHECK:   %[[I:.*]] = linalg.index 0
// CHECK:   %[[QI:.*]] = arith.addi %[[Q0]], %[[I]]
// CHECK:   %[[J:.*]] = linalg.index 1
// CHECK:   %[[KJ:.*]] = arith.addi %[[K0]], %[[J]]
// CHECK:   %[[DIAG:.*]] = arith.addi %[[QI]], %[[ALIGN]]
// CHECK:   %[[OFF:.*]] = arith.subi %[[DIAG]], %[[KJ]]
// CHECK:   %[[NEG:.*]] = arith.subi %{{.*}}, %[[OFF]]
// CHECK:   %[[DIST:.*]] = arith.maxsi %[[OFF]], %[[NEG]]
// CHECK:   %[[DI64:.*]] = arith.index_cast %[[DIST]] : index to i64
// CHECK:   %[[DF:.*]] = arith.sitofp %[[DI64]] : i64 to f32
// CHECK:   %[[BIAS:.*]] = arith.mulf %[[CSLOPE]], %[[DF]]
// CHECK:   %[[R:.*]] = arith.subf %[[X]], %[[BIAS]]
// CHECK:   linalg.yield %[[R]]
// Natural units: no log2(e).
// CHECK-LABEL: func.func @alibi_bias_natural
// CHECK-NOT: 1.44269502
// CHECK: linalg.generic
// CHECK:   arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:   arith.subf
func.func @alibi_bias(%s: tensor<4x2xf32>, %slope: f32, %q0: index, %k0: index, %m: index, %n: index) -> tensor<4x2xf32> {
  %sb = fa.alibi_bias %s, %slope at [%q0, %k0] in [%m, %n] {log2_domain} : tensor<4x2xf32>
  return %sb : tensor<4x2xf32>
}

func.func @alibi_bias_natural(%s: tensor<4x2xf32>, %slope: f32, %q0: index, %k0: index, %m: index, %n: index) -> tensor<4x2xf32> {
  %sb = fa.alibi_bias %s, %slope at [%q0, %k0] in [%m, %n] : tensor<4x2xf32>
  return %sb : tensor<4x2xf32>
}
