// (The shapes are representative: the kernel takes B, H, M and N at launch.)
// A relative-position bias as a score_mod: s + bias[h, i - j + 16383] from a
// captured [16, 32767] table (N <= 16384), with causal attention.
func.func @variant_relbias(%q: tensor<1x16x4096x128xbf16>, %k: tensor<1x16x4096x128xbf16>, %v: tensor<1x16x4096x128xbf16>, %bias: tensor<16x32767xf32>) -> tensor<1x16x4096x128xbf16> {
  %o = fa.attention %q, %k, %v captures(%bias) {mask = #fa.mask<causal>}
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<16x32767xf32>):
        %c16383 = arith.constant 16383 : index
        %d = arith.subi %i, %j : index
        %at = arith.addi %d, %c16383 : index
        %bv = tensor.extract %t[%h, %at] : tensor<16x32767xf32>
        %r = arith.addf %s, %bv : f32
        fa.yield %r : f32
      }
      : (tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<16x32767xf32>) -> tensor<1x16x4096x128xbf16>
  return %o : tensor<1x16x4096x128xbf16>
}
