// A relative-position bias read from a captured [H, M + N - 1] table and a
// document mask from captured per-position document ids, on a causal
// attention: B 1, H 2, M = N = 53 (partial 16-blocks), D 32.
func.func @bias_documents(%q: tensor<1x2x53x32xbf16>, %k: tensor<1x2x53x32xbf16>,
                          %v: tensor<1x2x53x32xbf16>, %table: tensor<2x105xf32>,
                          %docs: tensor<53xi32>) -> tensor<1x2x53x32xbf16> {
  %o = fa.attention %q, %k, %v captures(%table, %docs)
      {mask = #fa.mask<causal>}
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
           %t: tensor<2x105xf32>, %d: tensor<53xi32>):
        %c52 = arith.constant 52 : index
        %diff = arith.subi %i, %j : index
        %at = arith.addi %diff, %c52 : index
        %bias = tensor.extract %t[%h, %at] : tensor<2x105xf32>
        %two = arith.constant 2.0 : f32
        %scaled = arith.mulf %bias, %two : f32
        %r = arith.addf %s, %scaled : f32
        fa.yield %r : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index,
           %t: tensor<2x105xf32>, %d: tensor<53xi32>):
        %di = tensor.extract %d[%i] : tensor<53xi32>
        %dj = tensor.extract %d[%j] : tensor<53xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        fa.yield %same : i1
      }
      : (tensor<1x2x53x32xbf16>, tensor<1x2x53x32xbf16>, tensor<1x2x53x32xbf16>,
         tensor<2x105xf32>, tensor<53xi32>) -> tensor<1x2x53x32xbf16>
  return %o : tensor<1x2x53x32xbf16>
}
