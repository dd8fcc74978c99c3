// (The shapes are representative: the kernel takes B, H, M and N at launch.)
// The document mask of variant_document.mlir, block-sparse: the launch's
// block mask lists each Q block's partial and full 128x128 KV blocks, so
// the blocks between documents are never loaded.
func.func @variant_document_sparse(%q: tensor<1x16x4096x128xbf16>, %k: tensor<1x16x4096x128xbf16>, %v: tensor<1x16x4096x128xbf16>, %docs: tensor<16384xi32>) -> tensor<1x16x4096x128xbf16> {
  %o = fa.attention %q, %k, %v captures(%docs)
      {block_sparse = #fa.block_sparse<q_block = 128, kv_block = 128>}
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<16384xi32>):
        %di = tensor.extract %d[%i] : tensor<16384xi32>
        %dj = tensor.extract %d[%j] : tensor<16384xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        %causal = arith.cmpi ule, %j, %i : index
        %c = arith.andi %same, %causal : i1
        fa.yield %c : i1
      }
      : (tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<1x16x4096x128xbf16>, tensor<16384xi32>) -> tensor<1x16x4096x128xbf16>
  return %o : tensor<1x16x4096x128xbf16>
}
