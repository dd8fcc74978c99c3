// RUN: fa-opt %s --fa-recompute-backward="block-m=32 block-n=32" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-recompute-backward="block-m=32 block-n=32 test-omit-row-dot" --canonicalize --cse | FileCheck %s --check-prefix=NOROWDOT

// GQA (4 query heads, 2 KV heads), N = 80 (a partial KV block), softcap.
// CHECK-LABEL: func.func @grad
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x96x16xf16>, %[[K:[^:]+]]: tensor<1x2x80x16xf16>, %[[V:[^:]+]]: tensor<1x2x80x8xf16>, %[[O:[^:]+]]: tensor<1x4x96x8xf16>, %[[DO:[^:]+]]: tensor<1x4x96x8xf16>, %[[LSE:[^:]+]]: tensor<1x4x96xf32>)
//
// 1. D = rowsum(dO ∘ O), one f32 per query row (an O(M) buffer).
// CHECK: %[[D:[^ ]+]] = scf.for
// CHECK:   %[[DOT:[^ ]+]] = tensor.extract_slice %[[DO]]
// CHECK:   %[[OT:[^ ]+]] = tensor.extract_slice %[[O]]
// CHECK:   fa.row_dot %[[DOT]], %[[OT]] : tensor<32x8xf16>, tensor<32x8xf16> -> tensor<32xf32>
// dQ accumulates in f32, the only buffer of Q's size.
// CHECK: %[[DQACC:[^ ]+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x96x16xf32>)
//
// 2. KV blocks are the outer loop ...
// CHECK: scf.for %[[HKV:[^ ]+]] = %c0 to %c2
// CHECK: scf.for %[[K0:[^ ]+]] = %c0 to %c80 step %c32
// CHECK:   %[[KT:[^ ]+]] = tensor.pad
// CHECK:   %[[VT:[^ ]+]] = tensor.pad
// ... dK_j and dV_j start at zero and sum over the query heads of the group ...
// CHECK:   scf.for %[[G:[^ ]+]] = %c0 to %c2 step %c1 iter_args(%[[DKJ:[^ ]+]] = %{{.*}}, %[[DVJ:[^ ]+]] = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK:     %[[BASE:[^ ]+]] = arith.muli %[[HKV]], %c2
// CHECK:     %[[H:[^ ]+]] = arith.addi %[[BASE]], %[[G]]
// ... and Q blocks the inner one.
// CHECK:     scf.for %[[Q0:[^ ]+]] = %c0 to %c96 step %c32 iter_args(%[[DK:[^ ]+]] = %[[DKJ]], %[[DV:[^ ]+]] = %[[DVJ]], %[[DQ:[^ ]+]] = %{{.*}})
// CHECK:       %[[QT:[^ ]+]] = tensor.extract_slice %[[Q]][0, %[[H]], %[[Q0]], 0]
// CHECK:       %[[DOQ:[^ ]+]] = tensor.extract_slice %[[DO]][0, %[[H]], %[[Q0]], 0]
// CHECK:       %[[LSEQ:[^ ]+]] = tensor.extract_slice %[[LSE]][0, %[[H]], %[[Q0]]]
// CHECK:       %[[DQROW:[^ ]+]] = tensor.extract_slice %[[D]][0, %[[H]], %[[Q0]]]
// Recompute S and P = exp(S - LSE) from the saved LSE.
// CHECK:       %[[S:[^ ]+]] = fa.qk_scores %[[QT]], %[[KT]] {scale = 2.500000e-01 : f32, softcap = 2.000000e+01 : f32}
// CHECK:       %[[SM:[^ ]+]] = fa.apply_mask %[[S]], <causal> at[%[[Q0]], %[[K0]]]
// CHECK:       %[[P:[^ ]+]] = fa.exp_shifted %[[SM]], %[[LSEQ]] : tensor<32x32xf32>, tensor<32xf32>
// dV_j += Pᵀ dO_i
// CHECK:       %[[DVN:[^ ]+]] = fa.matmul %[[P]], %[[DOQ]], %[[DV]] {transpose_a}
// dP = dO_i V_jᵀ
// CHECK:       %[[DP:[^ ]+]] = fa.matmul %[[DOQ]], %[[VT]], %{{.*}} {transpose_b}
// dS = P ∘ (dP - D_i), then through the softcap's tanh
// CHECK:       %[[DS0:[^ ]+]] = fa.softmax_grad %[[P]], %[[DP]], %[[DQROW]]
// CHECK:       %[[DS:[^ ]+]] = fa.softcap_grad %[[DS0]], %[[S]] {softcap = 2.000000e+01 : f32}
// dK_j += scale · dSᵀ Q_i
// CHECK:       %[[DKN:[^ ]+]] = fa.matmul %[[DS]], %[[QT]], %[[DK]] {alpha = 2.500000e-01 : f32, transpose_a}
// dQ_i += scale · dS K_j
// CHECK:       %[[DQI:[^ ]+]] = tensor.extract_slice %[[DQ]][0, %[[H]], %[[Q0]], 0]
// CHECK:       %[[DQN:[^ ]+]] = fa.matmul %[[DS]], %[[KT]], %[[DQI]] {alpha = 2.500000e-01 : f32}
// CHECK:       %[[DQS:[^ ]+]] = tensor.insert_slice %[[DQN]] into %[[DQ]]
// CHECK:       scf.yield %[[DKN]], %[[DVN]], %[[DQS]]
// dK_j, dV_j are final when their KV block ends: stored (rows that exist).
// CHECK: arith.truncf %{{.*}} : tensor<32x16xf32> to tensor<32x16xf16>
// CHECK: tensor.insert_slice
// CHECK: arith.truncf %{{.*}} : tensor<32x8xf32> to tensor<32x8xf16>
// CHECK: tensor.insert_slice
// CHECK: arith.truncf %{{.*}} : tensor<1x4x96x16xf32> to tensor<1x4x96x16xf16>
// No M×N value:
// CHECK-NOT: 96x80

// The negative control forgets D: dS = P ∘ (dP - 0).
// NOROWDOT-LABEL: func.func @grad
// NOROWDOT-NOT: fa.row_dot
// NOROWDOT: fa.softmax_grad %{{.*}}, %{{.*}}, %cst
func.func @grad(%q: tensor<1x4x96x16xf16>, %k: tensor<1x2x80x16xf16>, %v: tensor<1x2x80x8xf16>,
                %o: tensor<1x4x96x8xf16>, %do: tensor<1x4x96x8xf16>, %lse: tensor<1x4x96xf32>)
    -> (tensor<1x4x96x16xf16>, tensor<1x2x80x16xf16>, tensor<1x2x80x8xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>, softcap = 20.0 : f32}
      : (tensor<1x4x96x16xf16>, tensor<1x2x80x16xf16>, tensor<1x2x80x8xf16>,
         tensor<1x4x96x8xf16>, tensor<1x4x96x8xf16>, tensor<1x4x96xf32>)
      -> (tensor<1x4x96x16xf16>, tensor<1x2x80x16xf16>, tensor<1x2x80x8xf16>)
  return %dq, %dk, %dv : tensor<1x4x96x16xf16>, tensor<1x2x80x16xf16>, tensor<1x2x80x8xf16>
}

// ALiBi with [Hq] slopes: the recomputed S gets the same bias as the forward
// (natural units), between the softcap and the mask; the softcap's chain
// rule still reads the unbiased S, since the bias is a constant of S.
// CHECK-LABEL: func.func @grad_alibi
// CHECK-SAME: %[[SLOPES:[^ :]+]]: tensor<4xf32>)
// The slope of query head h = kvHead·2 + member, read once per head:
// CHECK:   %[[H:[^ ]+]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:   %[[SLOPE:[^ ]+]] = tensor.extract %[[SLOPES]][%[[H]]] : tensor<4xf32>
// CHECK:   scf.for %[[Q0:[^ ]+]] = %c0 to %c96 step %c32
// CHECK:     %[[S:[^ ]+]] = fa.qk_scores
// CHECK:     %[[SB:[^ ]+]] = fa.alibi_bias %[[S]], %[[SLOPE]] at[%[[Q0]], %{{.*}}] in[%c96, %c80] : tensor<32x32xf32>
// CHECK:     %[[SM:[^ ]+]] = fa.apply_mask %[[SB]], <causal>
// CHECK:     fa.exp_shifted %[[SM]]
// CHECK:     fa.softcap_grad %{{.*}}, %[[S]]
func.func @grad_alibi(%q: tensor<1x4x96x16xf16>, %k: tensor<1x2x80x16xf16>, %v: tensor<1x2x80x8xf16>,
                      %o: tensor<1x4x96x8xf16>, %do: tensor<1x4x96x8xf16>, %lse: tensor<1x4x96xf32>,
                      %slopes: tensor<4xf32>)
    -> (tensor<1x4x96x16xf16>, tensor<1x2x80x16xf16>, tensor<1x2x80x8xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse alibi(%slopes)
      {mask = #fa.mask<causal>, softcap = 20.0 : f32}
      : (tensor<1x4x96x16xf16>, tensor<1x2x80x16xf16>, tensor<1x2x80x8xf16>,
         tensor<1x4x96x8xf16>, tensor<1x4x96x8xf16>, tensor<1x4x96xf32>, tensor<4xf32>)
      -> (tensor<1x4x96x16xf16>, tensor<1x2x80x16xf16>, tensor<1x2x80x8xf16>)
  return %dq, %dk, %dv : tensor<1x4x96x16xf16>, tensor<1x2x80x16xf16>, tensor<1x2x80x8xf16>
}
