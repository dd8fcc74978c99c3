// RUN: fa-opt %s --fa-tile="block-m=32 block-n=32" --fa-fuse-online-softmax --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="block-m=32 block-n=32" --fa-fuse-online-softmax="test-omit-rescale" --canonicalize --cse | FileCheck %s --check-prefix=NORESCALE

// Before this pass (see fa-tile.mlir) each Q block sweeps the KV blocks three
// times: row max, sum of exp, normalised P·V. After it, once.
// CHECK-LABEL: func.func @attention
// CHECK: scf.for %[[Q0:[^ ,:)]+]] = %c0 to %c100
// Exactly one KV loop per Q block, carrying m, l and acc:
// CHECK: %[[LOOP:[^ ,:)]+]]:3 = scf.for %[[K0:[^ ,:)]+]] = %c0 to %{{.*}} step %c32
// CHECK-SAME: iter_args(%[[M:[^ ,:)]+]] = %{{.*}}, %[[L:[^ ,:)]+]] = %{{.*}}, %[[ACC:[^ ,:)]+]] = %{{.*}}) -> (tensor<32xf32>, tensor<32xf32>, tensor<32x8xf32>)
// S in log2 units: log2(e) is folded into the scale, so exp2 is exact exp.
// CHECK:   %[[S:[^ ,:)]+]] = fa.qk_scores %{{.*}}, %{{.*}} {log2_domain, scale = 2.500000e-01 : f32}
// CHECK:   %[[SM:[^ ,:)]+]] = fa.apply_mask %[[S]], <causal> at[%[[Q0]], %[[K0]]]
// m_new = max(m, rowmax(S))
// CHECK:   %[[BLOCKMAX:[^ ,:)]+]] = fa.row_max %[[SM]]
// CHECK:   %[[MNEW:[^ ,:)]+]] = arith.maxnumf %[[M]], %[[BLOCKMAX]] : tensor<32xf32>
// alpha = exp2(m - m_new): the rescale of everything accumulated so far
// CHECK:   %[[ALPHA:[^ ,:)]+]] = fa.exp_shifted %[[M]], %[[MNEW]] {base2} : tensor<32xf32>, tensor<32xf32>
// P = exp2(S - m_new)
// CHECK:   %[[P:[^ ,:)]+]] = fa.exp_shifted %[[SM]], %[[MNEW]] {base2} : tensor<32x32xf32>, tensor<32xf32>
// l = alpha·l + rowsum(P)
// CHECK:   %[[LSCALED:[^ ,:)]+]] = arith.mulf %[[L]], %[[ALPHA]]
// acc = alpha·acc + P·V
// CHECK:   %[[ACCSCALED:[^ ,:)]+]] = fa.scale_rows %[[ACC]], %[[ALPHA]]
// CHECK:   %[[PSUM:[^ ,:)]+]] = fa.row_sum %[[P]]
// CHECK:   %[[LNEW:[^ ,:)]+]] = arith.addf %[[LSCALED]], %[[PSUM]]
// CHECK:   %[[ACCNEW:[^ ,:)]+]] = fa.matmul %[[P]], %{{.*}}, %[[ACCSCALED]]
// CHECK:   scf.yield %[[MNEW]], %[[LNEW]], %[[ACCNEW]]
// CHECK-NOT: scf.for
// m back to natural-log units; O = acc / l (1/l = 0 for a row with no key);
// LSE = m·ln2 + log(l).
// CHECK: %[[MNAT:[^ ,:)]+]] = arith.mulf %[[LOOP]]#0, %{{.*}} : tensor<32xf32>
// CHECK: %[[EMPTY:[^ ,:)]+]] = arith.cmpf oeq, %[[LOOP]]#1
// CHECK: %[[INVL:[^ ,:)]+]] = arith.select %[[EMPTY]]
// CHECK: %[[O:[^ ,:)]+]] = fa.scale_rows %[[LOOP]]#2, %[[INVL]]
// CHECK: %[[LOGL:[^ ,:)]+]] = math.log %[[LOOP]]#1
// CHECK: arith.addf %[[MNAT]], %[[LOGL]]
// CHECK: arith.truncf %[[O]]

// The negative control keeps the structure but drops alpha: l and acc are
// never rescaled when the running max grows.
// NORESCALE-LABEL: func.func @attention
// NORESCALE: scf.for %{{.*}} iter_args(%[[M:[^ ,:)]+]] = %{{.*}}, %[[L:[^ ,:)]+]] = %{{.*}}, %[[ACC:[^ ,:)]+]] = %{{.*}})
// NORESCALE-NOT: fa.scale_rows %[[ACC]]
// NORESCALE: %[[PSUM:[^ ,:)]+]] = fa.row_sum
// NORESCALE: arith.addf %[[L]], %[[PSUM]]
// NORESCALE: fa.matmul %{{.*}}, %{{.*}}, %[[ACC]]
func.func @attention(%q: tensor<1x2x100x16xf16>, %k: tensor<1x1x70x16xf16>, %v: tensor<1x1x70x8xf16>)
    -> (tensor<1x2x100x8xf16>, tensor<1x2x100xf32>) {
  %o, %lse = fa.attention %q, %k, %v {mask = #fa.mask<causal>}
      : (tensor<1x2x100x16xf16>, tensor<1x1x70x16xf16>, tensor<1x1x70x8xf16>)
      -> (tensor<1x2x100x8xf16>, tensor<1x2x100xf32>)
  return %o, %lse : tensor<1x2x100x8xf16>, tensor<1x2x100xf32>
}

// ALiBi: the bias is carried into the fused loop and, like the scores it is
// added to, switched to log2 units (-log2(e)·slope·|i + N - M - j|).
// CHECK-LABEL: func.func @alibi
// CHECK: %[[SLOPE:[^ ,:)]+]] = tensor.extract %{{.*}}[%{{.*}}] : tensor<2xf32>
// CHECK: scf.for %[[Q0:[^ ,:)]+]] = %c0 to %c100
// CHECK: scf.for %[[K0:[^ ,:)]+]] = %c0 to %{{.*}} step %c32
// CHECK:   %[[S:[^ ,:)]+]] = fa.qk_scores %{{.*}}, %{{.*}} {log2_domain, scale = 2.500000e-01 : f32}
// CHECK:   %[[SB:[^ ,:)]+]] = fa.alibi_bias %[[S]], %[[SLOPE]] at[%[[Q0]], %[[K0]]] in[%c100, %c70] {log2_domain}
// CHECK:   %[[SM:[^ ,:)]+]] = fa.apply_mask %[[SB]], <causal>
// CHECK:   fa.row_max %[[SM]]
// CHECK-NOT: scf.for
// CHECK: return
func.func @alibi(%q: tensor<1x2x100x16xf16>, %k: tensor<1x1x70x16xf16>, %v: tensor<1x1x70x8xf16>,
                 %slopes: tensor<2xf32>) -> tensor<1x2x100x8xf16> {
  %o = fa.attention %q, %k, %v alibi(%slopes) {mask = #fa.mask<causal>}
      : (tensor<1x2x100x16xf16>, tensor<1x1x70x16xf16>, tensor<1x1x70x8xf16>, tensor<2xf32>)
      -> tensor<1x2x100x8xf16>
  return %o : tensor<1x2x100x8xf16>
}
