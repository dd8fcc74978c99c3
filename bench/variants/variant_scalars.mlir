// (The shapes are representative: the kernel takes B, H, M and N at launch.)
// Scalar captures: s * temperature + (h == chosen ? 0.25 : 0), the
// temperature an f32, the chosen head an index.
func.func @variant_scalars(%q: tensor<1x16x4096x128xbf16>, %k: tensor<1x16x4096x128xbf16>, %v: tensor<1x16x4096x128xbf16>, %temperature: f32, %chosen: index) -> tensor<1x16x4096x128xbf16> {
  %o = fa.attention %q, %k, %v captures(%temperature, %chosen)
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %tp: f32, %ch: index):
        %x = arith.mulf %s, %tp : f32
        %is = arith.cmpi eq, %h, %ch : index
        %quarter = arith.constant 0.25 : f32
        %zero = arith.constant 0.0 : f32
        %add = arith.select %is, %quarter, %zero : f32
        %r = arith.addf %x, %add : f32
        fa.yield %r : f32
      }
      : (tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, f32, index) -> tensor<1x16x4096x128xbf16>
  return %o : tensor<1x16x4096x128xbf16>
}
