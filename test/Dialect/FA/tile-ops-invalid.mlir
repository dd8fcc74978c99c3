// RUN: fa-opt %s -split-input-file -verify-diagnostics

func.func @qk_scores$head_dim(%q: tensor<64x32xbf16>, %k: tensor<16x64xbf16>) {
  // expected-error @+1 {{'fa.qk_scores' op D of key (64) does not match 32}}
  %s = fa.qk_scores %q, %k {scale = 1.0 : f32} : tensor<64x32xbf16>, tensor<16x64xbf16> -> tensor<64x16xf32>
  return
}

// -----

func.func @qk_scores$result_shape(%q: tensor<64x32xbf16>, %k: tensor<16x32xbf16>) {
  // expected-error @+1 {{'fa.qk_scores' op columns of scores (32) does not match 16}}
  %s = fa.qk_scores %q, %k {scale = 1.0 : f32} : tensor<64x32xbf16>, tensor<16x32xbf16> -> tensor<64x32xf32>
  return
}

// -----

func.func @qk_scores$dynamic(%q: tensor<?x32xbf16>, %k: tensor<16x32xbf16>) {
  // expected-error @+1 {{'fa.qk_scores' op operand #0 must be statically shaped 2D tile of 16-bit float or bfloat16 type or f8E4M3FN type or 32-bit float values}}
  %s = fa.qk_scores %q, %k {scale = 1.0 : f32} : tensor<?x32xbf16>, tensor<16x32xbf16> -> tensor<64x16xf32>
  return
}

// -----

func.func @row_max$rows(%s: tensor<64x16xf32>) {
  // expected-error @+1 {{'fa.row_max' op rows of result (32) does not match 64}}
  %m = fa.row_max %s : tensor<64x16xf32> -> tensor<32xf32>
  return
}

// -----

func.func @exp_shifted$shift(%s: tensor<64x16xf32>, %m: tensor<16xf32>) {
  // expected-error @+1 {{'fa.exp_shifted' op length of shift (16) does not match 64}}
  %p = fa.exp_shifted %s, %m : tensor<64x16xf32>, tensor<16xf32>
  return
}

// -----

func.func @matmul$contraction(%p: tensor<64x16xf32>, %v: tensor<32x8xbf16>, %acc: tensor<64x8xf32>) {
  // expected-error @+1 {{'fa.matmul' op contraction size of rhs (32) does not match 16}}
  %o = fa.matmul %p, %v, %acc : tensor<64x16xf32>, tensor<32x8xbf16>, tensor<64x8xf32>
  return
}

// -----

func.func @matmul$transposed_acc(%ds: tensor<64x16xf32>, %q: tensor<64x32xbf16>, %acc: tensor<64x32xf32>) {
  // expected-error @+1 {{'fa.matmul' op rows of acc (64) does not match 16}}
  %dk = fa.matmul %ds, %q, %acc {transpose_a} : tensor<64x16xf32>, tensor<64x32xbf16>, tensor<64x32xf32>
  return
}

// -----

func.func @softmax_grad$row_dot(%p: tensor<64x16xf32>, %d: tensor<63xf32>) {
  // expected-error @+1 {{'fa.softmax_grad' op length of row_dot (63) does not match 64}}
  %ds = fa.softmax_grad %p, %p, %d : tensor<64x16xf32>, tensor<64x16xf32>, tensor<63xf32>
  return
}

// -----

// The ALiBi slope is an f32 scalar (the kernel reads it from f32 slopes);
// the custom form always parses it as f32, so the generic form shows this.
func.func @alibi_bias$slope_type(%s: tensor<64x16xf32>, %slope: f16, %i: index) {
  // expected-error @+1 {{'fa.alibi_bias' op operand #1 must be 32-bit float, but got 'f16'}}
  %sb = "fa.alibi_bias"(%s, %slope, %i, %i, %i, %i)
      : (tensor<64x16xf32>, f16, index, index, index, index) -> tensor<64x16xf32>
  return
}

// -----

func.func @qk_scores$fp8_without_descale(%q: tensor<64x32xf8E4M3FN>, %k: tensor<16x32xf8E4M3FN>) {
  // expected-error @+1 {{'fa.qk_scores' op f8E4M3FN tiles need a descale (Q's times K's)}}
  %s = fa.qk_scores %q, %k {scale = 1.0 : f32} : tensor<64x32xf8E4M3FN>, tensor<16x32xf8E4M3FN> -> tensor<64x16xf32>
  return
}

// -----

func.func @qk_scores$descale_on_bf16(%q: tensor<64x32xbf16>, %k: tensor<16x32xbf16>, %d: f32) {
  // expected-error @+1 {{'fa.qk_scores' op a descale is only for f8E4M3FN tiles}}
  %s = fa.qk_scores %q, %k descale(%d) {scale = 1.0 : f32} : tensor<64x32xbf16>, tensor<16x32xbf16> -> tensor<64x16xf32>
  return
}

// -----

func.func @matmul$fp8_with_bf16(%p: tensor<64x16xf8E4M3FN>, %v: tensor<16x32xbf16>, %acc: tensor<64x32xf32>) {
  // expected-error @+1 {{'fa.matmul' op f8E4M3FN operands come in pairs (both or neither)}}
  %o = fa.matmul %p, %v, %acc : tensor<64x16xf8E4M3FN>, tensor<16x32xbf16>, tensor<64x32xf32>
  return
}
