// (The shapes are representative: the kernel takes B, H, M and N at launch.)
// ALiBi as a score_mod: s - slopes[h] |i - j| with captured per-head slopes
// (Hq = 16; the built-in alibi=head at M = N).
func.func @variant_alibi(%q: tensor<1x16x4096x128xbf16>, %k: tensor<1x16x4096x128xbf16>, %v: tensor<1x16x4096x128xbf16>, %slopes: tensor<16xf32>) -> tensor<1x16x4096x128xbf16> {
  %o = fa.attention %q, %k, %v captures(%slopes)
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %sl: tensor<16xf32>):
        %slope = tensor.extract %sl[%h] : tensor<16xf32>
        %d = arith.subi %i, %j : index
        %di = arith.index_cast %d : index to i32
        %df = arith.sitofp %di : i32 to f32
        %dist = math.absf %df : f32
        %pen = arith.mulf %slope, %dist : f32
        %r = arith.subf %s, %pen : f32
        fa.yield %r : f32
      }
      : (tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<16xf32>) -> tensor<1x16x4096x128xbf16>
  return %o : tensor<1x16x4096x128xbf16>
}
