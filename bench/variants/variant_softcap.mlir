// (The shapes are representative: the kernel takes B, H, M and N at launch.)
// Softcap 30 as a score_mod: 30 tanh(s / 30) (the built-in softcap=30).
func.func @variant_softcap(%q: tensor<1x16x4096x128xbf16>, %k: tensor<1x16x4096x128xbf16>, %v: tensor<1x16x4096x128xbf16>) -> tensor<1x16x4096x128xbf16> {
  %o = fa.attention %q, %k, %v
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %r = arith.mulf %t, %cap : f32
        fa.yield %r : f32
      }
      : (tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>) -> tensor<1x16x4096x128xbf16>
  return %o : tensor<1x16x4096x128xbf16>
}
