// (The shapes are representative: the kernel takes B, H, M and N at launch.)
// Block-sparse attention with a block pattern of its own: key block j/128
// is visible to query block i/128 where the captured [128, 128] table says
// so (N <= 16384), block-sparse over the same 128x128 blocks.
func.func @variant_blocks(%q: tensor<1x16x4096x128xbf16>, %k: tensor<1x16x4096x128xbf16>, %v: tensor<1x16x4096x128xbf16>, %table: tensor<128x128xi8>) -> tensor<1x16x4096x128xbf16> {
  %o = fa.attention %q, %k, %v captures(%table)
      {block_sparse = #fa.block_sparse<q_block = 128, kv_block = 128>}
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<128x128xi8>):
        %c128 = arith.constant 128 : index
        %bi = arith.divui %i, %c128 : index
        %bj = arith.divui %j, %c128 : index
        %x = tensor.extract %t[%bi, %bj] : tensor<128x128xi8>
        %zero = arith.constant 0 : i8
        %on = arith.cmpi ne, %x, %zero : i8
        fa.yield %on : i1
      }
      : (tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<128x128xi8>) -> tensor<1x16x4096x128xbf16>
  return %o : tensor<1x16x4096x128xbf16>
}
