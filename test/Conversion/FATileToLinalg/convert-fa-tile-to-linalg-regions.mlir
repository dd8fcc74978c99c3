// RUN: fa-opt %s --convert-fa-tile-to-linalg | FileCheck %s
// A variant region becomes the body of an elementwise linalg.generic: the
// position is the tile's offset plus linalg.index, clamped to the last
// real query and key; a read of a captured tensor clamps each index to the
// tensor's extent; in log2 units the score is taken to natural units and
// back around the body. A mask_mod selects -inf where it yields false.

// CHECK-LABEL: func.func @score_then_mask
// CHECK-SAME: (%[[S:.*]]: tensor<16x8xf32>, %[[Q0:.*]]: index, %[[K0:.*]]: index, %[[B:.*]]: index, %[[H:.*]]: index, %[[T:.*]]: tensor<2x40xf32>, %[[D:.*]]: tensor<40xi32>)
// CHECK: %[[SCORED:.*]] = linalg.generic
// CHECK-SAME: ins(%[[S]] : tensor<16x8xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK:   %[[NAT:.*]] = arith.mulf %[[X]], %[[LN2]] : f32
// CHECK:   %[[I:.*]] = linalg.index 0
// CHECK:   %[[QI:.*]] = arith.addi %[[Q0]], %[[I]]
// CHECK:   %[[J:.*]] = linalg.index 1
// CHECK:   %[[KJ:.*]] = arith.addi %[[K0]], %[[J]]
// CHECK:   %[[QC:.*]] = arith.minsi %[[QI]], %{{.*}}
// CHECK:   %[[KC:.*]] = arith.minsi %[[KJ]], %{{.*}}
// CHECK:   %[[AT:.*]] = arith.subi %[[QC]], %[[KC]]
// CHECK:   %[[D0:.*]] = tensor.dim %[[T]], %c0
// CHECK:   arith.minsi %[[H]]
// CHECK:   arith.maxsi
// CHECK:   %[[D1:.*]] = tensor.dim %[[T]], %c1
// CHECK:   arith.minsi %[[AT]]
// CHECK:   arith.maxsi
// CHECK:   %[[BIAS:.*]] = tensor.extract %[[T]][
// CHECK:   %[[SUM:.*]] = arith.addf %[[NAT]], %[[BIAS]]
// CHECK:   %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK:   %[[BACK:.*]] = arith.mulf %[[SUM]], %[[LOG2E]] : f32
// CHECK:   linalg.yield %[[BACK]]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SCORED]] : tensor<16x8xf32>)
// CHECK:   tensor.extract %[[D]][
// CHECK:   tensor.extract %[[D]][
// CHECK:   %[[SAME:.*]] = arith.cmpi eq
// CHECK:   arith.select %[[SAME]], %{{.*}}, %{{.*}} : f32
// CHECK-NOT: fa.score_mod
// CHECK-NOT: fa.mask_mod
func.func @score_then_mask(%s: tensor<16x8xf32>, %q0: index, %k0: index,
                           %b: index, %h: index, %table: tensor<2x40xf32>,
                           %docs: tensor<40xi32>) -> tensor<16x8xf32> {
  %m = arith.constant 30 : index
  %n = arith.constant 40 : index
  %r = fa.score_mod %s at [%q0, %k0] in [%m, %n] head [%b, %h]
      captures(%table : tensor<2x40xf32>) {log2_domain} : tensor<16x8xf32> {
  ^bb0(%x: f32, %bb: index, %hh: index, %i: index, %j: index,
       %t: tensor<2x40xf32>):
    %at = arith.subi %i, %j : index
    %bias = tensor.extract %t[%hh, %at] : tensor<2x40xf32>
    %y = arith.addf %x, %bias : f32
    fa.yield %y : f32
  }
  %t = fa.mask_mod %r at [%q0, %k0] in [%m, %n] head [%b, %h]
      captures(%docs : tensor<40xi32>) : tensor<16x8xf32> {
  ^bb0(%bb: index, %hh: index, %i: index, %j: index, %d: tensor<40xi32>):
    %di = tensor.extract %d[%i] : tensor<40xi32>
    %dj = tensor.extract %d[%j] : tensor<40xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    fa.yield %same : i1
  }
  return %t : tensor<16x8xf32>
}
