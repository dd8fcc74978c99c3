// (The shapes are representative: the kernel takes B, H, M and N at launch.)
// Prefix-LM as a mask_mod: the first 2048 keys are visible to every query,
// the rest causally.
func.func @variant_prefix(%q: tensor<1x16x4096x128xbf16>, %k: tensor<1x16x4096x128xbf16>, %v: tensor<1x16x4096x128xbf16>) -> tensor<1x16x4096x128xbf16> {
  %o = fa.attention %q, %k, %v
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c2048 = arith.constant 2048 : index
        %prefix = arith.cmpi ult, %j, %c2048 : index
        %causal = arith.cmpi ule, %j, %i : index
        %c = arith.ori %prefix, %causal : i1
        fa.yield %c : i1
      }
      : (tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>) -> tensor<1x16x4096x128xbf16>
  return %o : tensor<1x16x4096x128xbf16>
}
