// RUN: fa-opt %s --split-input-file --fa-recompute-backward="block-m=32 block-n=32" --cse --verify-diagnostics | FileCheck %s
// The backward applies the regions as the forward does, and takes dS back
// through the score_mod: a second fa.score_mod holds the region's
// derivative (forward mode: d/ds of 2·tanh(s/2)·w is (1/2)·(1 - t²)·2·w),
// multiplied into dS where dS is not 0.

// CHECK-LABEL: func.func @softcap_weighted
// CHECK: %[[S:.*]] = fa.qk_scores
// CHECK: %[[MOD:.*]] = fa.score_mod %[[S]] at[%[[Q0:.*]], %[[K0:.*]]] in[%{{.*}}, %{{.*}}] head[%[[B:.*]], %[[H:.*]]] captures(%[[W:.*]] : f32) : tensor<32x32xf32> {
// CHECK: math.tanh
// CHECK: }
// CHECK: %[[MASKED:.*]] = fa.mask_mod %[[MOD]]
// CHECK: fa.apply_mask %[[MASKED]]
// CHECK: %[[DS:.*]] = fa.softmax_grad
// CHECK: %[[SLOPE:.*]] = fa.score_mod %[[S]] at[%[[Q0]], %[[K0]]] in[%{{.*}}, %{{.*}}] head[%[[B]], %[[H]]] captures(%[[W]] : f32) : tensor<32x32xf32> {
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[WW:.*]]: f32):
// CHECK:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:   %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:   %[[IN:.*]] = arith.divf %[[X]], %[[TWO]] : f32
// CHECK:   %[[DIN:.*]] = arith.divf %[[ONE]], %[[TWO]] : f32
// CHECK:   %[[T:.*]] = math.tanh %[[IN]] : f32
// CHECK:   %[[T2:.*]] = arith.mulf %[[T]], %[[T]] : f32
// CHECK:   %[[NT2:.*]] = arith.negf %[[T2]] : f32
// CHECK:   %[[SECH2:.*]] = arith.addf %[[ONE]], %[[NT2]] : f32
// CHECK:   %[[DT:.*]] = arith.mulf %[[DIN]], %[[SECH2]] : f32
// CHECK:   %[[DCAP:.*]] = arith.mulf %[[DT]], %[[TWO]] : f32
// CHECK:   %[[DW:.*]] = arith.mulf %[[DCAP]], %[[WW]] : f32
// CHECK:   fa.yield %[[DW]] : f32
// CHECK: }
// CHECK: %[[CHAINED:.*]] = arith.mulf %[[DS]], %[[SLOPE]] : tensor<32x32xf32>
// CHECK: %[[ZERO:.*]] = arith.cmpf oeq, %[[DS]]
// CHECK: arith.select %[[ZERO]], %[[DS]], %[[CHAINED]]
func.func @softcap_weighted(%q: tensor<1x1x40x16xf16>, %k: tensor<1x1x40x16xf16>,
                            %v: tensor<1x1x40x16xf16>, %o: tensor<1x1x40x16xf16>,
                            %do: tensor<1x1x40x16xf16>, %lse: tensor<1x1x40xf32>,
                            %w: f32)
    -> (tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse captures(%w)
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %x: f32):
        %two = arith.constant 2.0 : f32
        %in = arith.divf %s, %two : f32
        %t = math.tanh %in : f32
        %c = arith.mulf %t, %two : f32
        %r = arith.mulf %c, %x : f32
        fa.yield %r : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %x: f32):
        %ok = arith.cmpi ule, %j, %i : index
        fa.yield %ok : i1
      }
      : (tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>,
         tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40xf32>, f32)
      -> (tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>)
  return %dq, %dk, %dv
      : tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>
}

// -----

// An op of the score's path with no derivative rule: refused before any
// loop is built.
func.func @no_rule(%q: tensor<1x1x40x16xf16>, %k: tensor<1x1x40x16xf16>,
                   %v: tensor<1x1x40x16xf16>, %o: tensor<1x1x40x16xf16>,
                   %do: tensor<1x1x40x16xf16>, %lse: tensor<1x1x40xf32>)
    -> (tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>) {
  // expected-error @+1 {{'fa.attention_grad' op score_mod: no derivative for 'math.atan' (the backward differentiates the score_mod)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %r = math.atan %s : f32
        fa.yield %r : f32
      }
      : (tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>,
         tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40xf32>)
      -> (tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>)
  return %dq, %dk, %dv
      : tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>
}

// -----

// The score reaches an op with an integer result (a bitcast): no rule, so
// refused rather than taken as constant.
func.func @bitcast(%q: tensor<1x1x40x16xf16>, %k: tensor<1x1x40x16xf16>,
                   %v: tensor<1x1x40x16xf16>, %o: tensor<1x1x40x16xf16>,
                   %do: tensor<1x1x40x16xf16>, %lse: tensor<1x1x40xf32>)
    -> (tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>) {
  // expected-error @+1 {{'fa.attention_grad' op score_mod: no derivative for 'arith.bitcast' (the backward differentiates the score_mod)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %bits = arith.bitcast %s : f32 to i32
        %mask = arith.constant 2147483647 : i32
        %abs = arith.andi %bits, %mask : i32
        %r = arith.bitcast %abs : i32 to f32
        fa.yield %r : f32
      }
      : (tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>,
         tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40xf32>)
      -> (tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>)
  return %dq, %dk, %dv
      : tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16>
}
