// RUN: fa-opt %s | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt | FileCheck %s

// Every L2 tile op round-trips in its custom form.
// CHECK-LABEL: func.func @tile_ops
func.func @tile_ops(%q: tensor<64x32xbf16>, %k: tensor<16x32xbf16>, %v: tensor<16x8xbf16>,
                    %m: tensor<64xf32>, %acc: tensor<64x8xf32>, %i: index, %n: index,
                    %slope: f32) -> tensor<64x8xf32> {
  // CHECK: fa.qk_scores %{{.*}}, %{{.*}} {log2_domain, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32} : tensor<64x32xbf16>, tensor<16x32xbf16> -> tensor<64x16xf32>
  %s = fa.qk_scores %q, %k {scale = 0.125 : f32, softcap = 30.0 : f32, log2_domain}
      : tensor<64x32xbf16>, tensor<16x32xbf16> -> tensor<64x16xf32>
  // CHECK: fa.alibi_bias %{{.*}}, %{{.*}} at[%{{.*}}, %{{.*}}] in[%{{.*}}, %{{.*}}] {log2_domain} : tensor<64x16xf32>
  %sb = fa.alibi_bias %s, %slope at [%i, %i] in [%n, %n] {log2_domain} : tensor<64x16xf32>
  // CHECK: fa.apply_mask %{{.*}}, <window(8, 0)> at[%{{.*}}, %{{.*}}] in[%{{.*}}, %{{.*}}] : tensor<64x16xf32>
  %sm = fa.apply_mask %sb, #fa.mask<window(8, 0)> at [%i, %i] in [%n, %n] : tensor<64x16xf32>
  // CHECK: fa.row_max %{{.*}} : tensor<64x16xf32> -> tensor<64xf32>
  %bm = fa.row_max %sm : tensor<64x16xf32> -> tensor<64xf32>
  // CHECK: fa.exp_shifted %{{.*}}, %{{.*}} {base2} : tensor<64xf32>, tensor<64xf32>
  %alpha = fa.exp_shifted %m, %bm {base2} : tensor<64xf32>, tensor<64xf32>
  // CHECK: fa.exp_shifted %{{.*}}, %{{.*}} : tensor<64x16xf32>, tensor<64xf32>
  %p = fa.exp_shifted %sm, %bm : tensor<64x16xf32>, tensor<64xf32>
  // CHECK: fa.row_sum %{{.*}} : tensor<64x16xf32> -> tensor<64xf32>
  %l = fa.row_sum %p : tensor<64x16xf32> -> tensor<64xf32>
  // CHECK: fa.scale_rows %{{.*}}, %{{.*}} : tensor<64x8xf32>, tensor<64xf32>
  %rescaled = fa.scale_rows %acc, %alpha : tensor<64x8xf32>, tensor<64xf32>
  // CHECK: fa.matmul %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x16xf32>, tensor<16x8xbf16>, tensor<64x8xf32>
  %acc1 = fa.matmul %p, %v, %rescaled : tensor<64x16xf32>, tensor<16x8xbf16>, tensor<64x8xf32>
  // CHECK: fa.row_dot %{{.*}}, %{{.*}} : tensor<64x8xf32>, tensor<64x8xf32> -> tensor<64xf32>
  %d = fa.row_dot %acc1, %acc1 : tensor<64x8xf32>, tensor<64x8xf32> -> tensor<64xf32>
  // CHECK: fa.matmul %{{.*}}, %{{.*}}, %{{.*}} {transpose_b} : tensor<64x8xf32>, tensor<16x8xbf16>, tensor<64x16xf32>
  %dp = fa.matmul %acc1, %v, %p {transpose_b} : tensor<64x8xf32>, tensor<16x8xbf16>, tensor<64x16xf32>
  // CHECK: fa.softmax_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64xf32>
  %ds = fa.softmax_grad %p, %dp, %d : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64xf32>
  // CHECK: fa.softcap_grad %{{.*}}, %{{.*}} {softcap = 3.000000e+01 : f32} : tensor<64x16xf32>, tensor<64x16xf32>
  %dx = fa.softcap_grad %ds, %s {softcap = 30.0 : f32} : tensor<64x16xf32>, tensor<64x16xf32>
  // CHECK: fa.matmul %{{.*}}, %{{.*}}, %{{.*}} {alpha = 1.250000e-01 : f32, transpose_a} : tensor<64x16xf32>, tensor<64x32xbf16>, tensor<16x32xf32>
  %dk0 = arith.constant dense<0.0> : tensor<16x32xf32>
  %dk = fa.matmul %dx, %q, %dk0 {transpose_a, alpha = 0.125 : f32} : tensor<64x16xf32>, tensor<64x32xbf16>, tensor<16x32xf32>
  return %acc1 : tensor<64x8xf32>
}
