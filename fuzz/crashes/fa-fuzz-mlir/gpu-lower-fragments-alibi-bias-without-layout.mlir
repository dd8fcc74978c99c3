

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
