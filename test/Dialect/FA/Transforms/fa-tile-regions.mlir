// RUN: fa-opt %s --fa-tile="block-m=32 block-n=32" --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="block-m=32 block-n=32" --fa-fuse-online-softmax --cse | FileCheck %s --check-prefix=FUSED
// The variant regions are cloned onto every score tile: fa.score_mod after
// the scores (and any bias), then fa.mask_mod, then the mask attribute's
// fa.apply_mask; the captured operands stay the function's values. After
// fusion the score_mod works in log2 units like the scores it gets.

// CHECK-LABEL: func.func @bias_and_documents
// CHECK-SAME: (%{{.*}}: tensor<1x2x100x16xf16>, %{{.*}}: tensor<1x1x70x16xf16>, %{{.*}}: tensor<1x1x70x16xf16>, %[[TABLE:.*]]: tensor<2x169xf32>, %[[DOCS:.*]]: tensor<70xi32>)
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: scf.for %[[Q0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: scf.for %[[K0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:   %[[S:.*]] = fa.qk_scores
// CHECK:   %[[SB:.*]] = fa.score_mod %[[S]] at[%[[Q0]], %[[K0]]] in[%{{.*}}, %{{.*}}] head[%[[B]], %[[H]]] captures(%[[TABLE]], %[[DOCS]] : tensor<2x169xf32>, tensor<70xi32>) : tensor<32x32xf32> {
// CHECK:   ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: tensor<2x169xf32>, %{{.*}}: tensor<70xi32>):
// CHECK:     tensor.extract
// CHECK:     fa.yield %{{.*}} : f32
// CHECK:   }
// CHECK:   %[[SD:.*]] = fa.mask_mod %[[SB]] at[%[[Q0]], %[[K0]]] in[%{{.*}}, %{{.*}}] head[%[[B]], %[[H]]] captures(%[[TABLE]], %[[DOCS]] : tensor<2x169xf32>, tensor<70xi32>) : tensor<32x32xf32> {
// CHECK:     arith.cmpi eq
// CHECK:     fa.yield %{{.*}} : i1
// CHECK:   }
// CHECK:   fa.apply_mask %[[SD]], <causal>
// CHECK:   fa.row_max

// FUSED-LABEL: func.func @bias_and_documents
// FUSED: fa.qk_scores %{{.*}} {log2_domain, scale = 2.500000e-01 : f32}
// FUSED: fa.score_mod %{{.*}} {log2_domain} : tensor<32x32xf32> {
// FUSED: fa.mask_mod %{{.*}} : tensor<32x32xf32> {
// FUSED-NOT: fa.score_mod
func.func @bias_and_documents(%q: tensor<1x2x100x16xf16>,
                              %k: tensor<1x1x70x16xf16>,
                              %v: tensor<1x1x70x16xf16>,
                              %table: tensor<2x169xf32>,
                              %docs: tensor<70xi32>)
    -> tensor<1x2x100x16xf16> {
  %o = fa.attention %q, %k, %v captures(%table, %docs)
      {mask = #fa.mask<causal>}
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
           %t: tensor<2x169xf32>, %d: tensor<70xi32>):
        %c69 = arith.constant 69 : index
        %diff = arith.subi %i, %j : index
        %at = arith.addi %diff, %c69 : index
        %bias = tensor.extract %t[%h, %at] : tensor<2x169xf32>
        %r = arith.addf %s, %bias : f32
        fa.yield %r : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index,
           %t: tensor<2x169xf32>, %d: tensor<70xi32>):
        %dq = tensor.extract %d[%i] : tensor<70xi32>
        %dk = tensor.extract %d[%j] : tensor<70xi32>
        %same = arith.cmpi eq, %dq, %dk : i32
        fa.yield %same : i1
      }
      : (tensor<1x2x100x16xf16>, tensor<1x1x70x16xf16>,
         tensor<1x1x70x16xf16>, tensor<2x169xf32>, tensor<70xi32>)
      -> tensor<1x2x100x16xf16>
  return %o : tensor<1x2x100x16xf16>
}
