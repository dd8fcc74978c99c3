// (The shapes are representative: the kernel takes B, H, M and N at launch.)
// The causal mask_mod of variant_causal.mlir, block-sparse over 128x128
// blocks: the diagonal blocks are partial, those below it full.
func.func @variant_causal_sparse(%q: tensor<1x16x4096x128xbf16>, %k: tensor<1x16x4096x128xbf16>, %v: tensor<1x16x4096x128xbf16>) -> tensor<1x16x4096x128xbf16> {
  %o = fa.attention %q, %k, %v
      {block_sparse = #fa.block_sparse<q_block = 128, kv_block = 128>}
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.cmpi ule, %j, %i : index
        fa.yield %c : i1
      }
      : (tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>) -> tensor<1x16x4096x128xbf16>
  return %o : tensor<1x16x4096x128xbf16>
}
