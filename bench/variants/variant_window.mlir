// (The shapes are representative: the kernel takes B, H, M and N at launch.)
// A sliding window of 1024 keys as a mask_mod: i - 1023 <= j <= i (M = N;
// the built-in mask=window(1023,0)).
func.func @variant_window(%q: tensor<1x16x4096x128xbf16>, %k: tensor<1x16x4096x128xbf16>, %v: tensor<1x16x4096x128xbf16>) -> tensor<1x16x4096x128xbf16> {
  %o = fa.attention %q, %k, %v
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c1023 = arith.constant 1023 : index
        %reach = arith.addi %j, %c1023 : index
        %after = arith.cmpi ule, %i, %reach : index
        %before = arith.cmpi ule, %j, %i : index
        %c = arith.andi %after, %before : i1
        fa.yield %c : i1
      }
      : (tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>) -> tensor<1x16x4096x128xbf16>
  return %o : tensor<1x16x4096x128xbf16>
}
