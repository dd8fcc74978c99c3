// (The shapes are representative: the kernel takes B, H, M and N at launch.)
// Causal attention as a mask_mod: key j visible to query i when j <= i
// (M = N; the built-in mask=causal means the same).
func.func @variant_causal(%q: tensor<1x16x4096x128xbf16>, %k: tensor<1x16x4096x128xbf16>, %v: tensor<1x16x4096x128xbf16>) -> tensor<1x16x4096x128xbf16> {
  %o = fa.attention %q, %k, %v
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.cmpi ule, %j, %i : index
        fa.yield %c : i1
      }
      : (tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>) -> tensor<1x16x4096x128xbf16>
  return %o : tensor<1x16x4096x128xbf16>
}
