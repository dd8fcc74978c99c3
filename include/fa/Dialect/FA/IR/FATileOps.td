//===- FATileOps.td - fa tile-level (L2) operations --------*- tablegen -*-===//
//
// Part of fa-mlir.
//
// The small ops that tiled attention is written in (level L2). Each is one
// line of the FlashAttention algorithm on one tile: S = QKᵀ, masking, row
// max, exp(S - m), row sums, P·V, and the backward's dS. All are on static
// f32 tiles (inputs may be f16/bf16), so they map one-to-one onto MMA
// fragments on the GPU and onto linalg.generic on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_IR_FATILEOPS_TD
#define FA_DIALECT_FA_IR_FATILEOPS_TD

include "fa/Dialect/FA/IR/FADialect.td"
include "fa/Dialect/FA/IR/FAAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class FA_StaticTile<list<Type> types, list<int> ranks>
    : RankedTensorOf<types, [HasStaticShapePred, HasAnyRankOfPred<ranks>],
                     "statically shaped " # !interleave(!foreach(r, ranks, r # "D"), "/") # " tile">;
def FA_Tile2D : FA_StaticTile<[F16, BF16, F32], [2]>;
// The operands of the MMAs (S = QKᵀ, P·V) may also be f8E4M3FN.
def FA_MmaTile2D : FA_StaticTile<[F16, BF16, F8E4M3FN, F32], [2]>;
def FA_F32Tile2D : FA_StaticTile<[F32], [2]>;
def FA_F32Tile1D : FA_StaticTile<[F32], [1]>;
def FA_F32Tile : FA_StaticTile<[F32], [1, 2]>;

class FA_TileOp<string mnemonic, list<Trait> traits = []>
    : FA_Op<mnemonic, !listconcat([Pure], traits)>;

def FA_QKScoresOp : FA_TileOp<"qk_scores"> {
  let summary = "Score tile S = softcap(scale · Q·Kᵀ), optionally in log2 units";
  let description = [{
    `S[i, j] = c * f(scale * descale * sum_d Q[i, d] * K[j, d])`,
    accumulated in f32, where `f(x) = softcap * tanh(x / softcap)` when
    `softcap` is present and `f(x) = x` otherwise, and `c = log2(e)` when
    `log2_domain` is set (so that `exp2(S)` equals `exp` of the natural-unit
    score; the lowering folds `c` into `scale` when there is no softcap) and
    `c = 1` otherwise. `descale` (f8E4M3FN tiles only, where it is required)
    is a run-time f32, the product of Q's and K's per-tensor descale
    factors; it is 1 otherwise.

    ```mlir
    %s = fa.qk_scores %q_tile, %k_tile {scale = 0.125 : f32, log2_domain}
        : tensor<64x64xbf16>, tensor<32x64xbf16> -> tensor<64x32xf32>
    %s8 = fa.qk_scores %q8, %k8 descale(%dqk) {scale = 0.125 : f32}
        : tensor<64x64xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins FA_MmaTile2D:$query, FA_MmaTile2D:$key,
                       Optional<F32>:$descale, F32Attr:$scale,
                       OptionalAttr<F32Attr>:$softcap, UnitAttr:$log2_domain);
  let results = (outs FA_F32Tile2D:$scores);
  let assemblyFormat = [{
    $query `,` $key (`descale` `(` $descale^ `)`)? attr-dict `:` type($query)
    `,` type($key) `->` type($scores)
  }];
  let hasVerifier = 1;
}

def FA_ApplyMaskOp : FA_TileOp<"apply_mask", [AllTypesMatch<["scores", "result"]>]> {
  let summary = "Set to -inf the scores of keys a query may not see";
  let description = [{
    The tile holds queries `query_offset + i` and keys `key_offset + j` of a
    problem with `query_len` queries and `key_len` keys. A score becomes
    `-inf` when that key is invisible to that query under `mask` (docs/design.md's
    definitions, bottom-right aligned) or lies past `key_len` (a padded key
    row of a partial last block). Rows past `query_len` are left alone: they
    are never written back.

    ```mlir
    %sm = fa.apply_mask %s, #fa.mask<causal> at [%q0, %k0] in [%c113, %c203]
        : tensor<64x32xf32>
    ```
  }];
  let arguments = (ins FA_F32Tile2D:$scores, FA_MaskAttr:$mask,
                       Index:$query_offset, Index:$key_offset,
                       Index:$query_len, Index:$key_len);
  let results = (outs FA_F32Tile2D:$result);
  let assemblyFormat = [{
    $scores `,` $mask `at` `[` $query_offset `,` $key_offset `]`
    `in` `[` $query_len `,` $key_len `]` attr-dict `:` type($scores)
  }];
}

def FA_AlibiBiasOp : FA_TileOp<"alibi_bias", [AllTypesMatch<["scores", "result"]>]> {
  let summary = "Add the ALiBi bias -slope · |i + N - M - j| to a score tile";
  let description = [{
    The tile holds queries `query_offset + i` and keys `key_offset + j` of a
    problem with `query_len` (M) queries and `key_len` (N) keys, as for
    `fa.apply_mask`. Elementwise:

    `R[i, j] = S[i, j] - c * slope * |query_offset + i + N - M - (key_offset + j)|`

    with `c = log2(e)` when `log2_domain` is set (the scores are then in log2
    units, as `fa.qk_scores {log2_domain}` makes them) and `c = 1` otherwise.
    The distance is bottom-right aligned like the causal mask, so the last
    query and the last key are at distance 0. `slope` is the f32 slope of
    the tile's query head (FlashAttention's `alibi_slopes[b, h]`). It comes
    after the softcap and before the mask: a `-inf` score stays `-inf`, and
    padded rows and keys get a finite bias the mask then overrides.

    ```mlir
    %sb = fa.alibi_bias %s, %slope at [%q0, %k0] in [%c113, %c203] {log2_domain}
        : tensor<64x32xf32>
    %sm = fa.apply_mask %sb, #fa.mask<causal> at [%q0, %k0] in [%c113, %c203]
        : tensor<64x32xf32>
    ```
  }];
  let arguments = (ins FA_F32Tile2D:$scores, F32:$slope,
                       Index:$query_offset, Index:$key_offset,
                       Index:$query_len, Index:$key_len,
                       UnitAttr:$log2_domain);
  let results = (outs FA_F32Tile2D:$result);
  let assemblyFormat = [{
    $scores `,` $slope `at` `[` $query_offset `,` $key_offset `]`
    `in` `[` $query_len `,` $key_len `]` attr-dict `:` type($scores)
  }];
}

// The variant regions of fa.attention on one score tile. The region is the
// user's, cloned; its contract is in fa/Dialect/FA/IR/ModRegions.h.
class FA_ModTileOp<string mnemonic>
    : FA_TileOp<mnemonic, [AllTypesMatch<["scores", "result"]>,
                           IsolatedFromAbove]> {
  let arguments = (ins FA_F32Tile2D:$scores,
                       Index:$query_offset, Index:$key_offset,
                       Index:$query_len, Index:$key_len,
                       Index:$batch, Index:$head,
                       Variadic<AnyType>:$captures,
                       UnitAttr:$log2_domain);
  let results = (outs FA_F32Tile2D:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $scores `at` `[` $query_offset `,` $key_offset `]`
    `in` `[` $query_len `,` $key_len `]`
    `head` `[` $batch `,` $head `]`
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict
    `:` type($scores) $body
  }];
  let hasRegionVerifier = 1;
}

def FA_ScoreModOp : FA_ModTileOp<"score_mod"> {
  let summary = "Apply fa.attention's score_mod region to every score of a tile";
  let description = [{
    The tile holds queries `query_offset + i` and keys `key_offset + j` of a
    problem with `query_len` (M) queries and `key_len` (N) keys, in batch
    `batch` and query head `head`. Elementwise,

    `R[i, j] = body(S[i, j], batch, head, q, kv, captures...)`

    with `q = min(query_offset + i, M - 1)` and `kv = min(key_offset + j,
    N - 1)`: a padded row or key of a partial block is evaluated at the last
    real one, so the region only ever sees real positions; fa.apply_mask
    drops padded keys and padded rows are never stored. An index into a
    captured tensor is clamped to its extent, so no read is out of bounds.
    With `log2_domain` the scores are in log2 units (as `fa.qk_scores
    {log2_domain}` makes them): the body gets `S·ln 2` and its result is
    multiplied by log2(e).

    ```mlir
    %r = fa.score_mod %s at [%q0, %k0] in [%c113, %c203] head [%b, %h]
        : tensor<64x32xf32> {
    ^bb0(%x: f32, %bb: index, %hh: index, %i: index, %j: index):
      %c = arith.constant 2.0 : f32
      %y = arith.mulf %x, %c : f32
      fa.yield %y : f32
    }
    ```
  }];
}

def FA_MaskModOp : FA_ModTileOp<"mask_mod"> {
  let summary = "Set to -inf the scores fa.attention's mask_mod region hides";
  let description = [{
    Positions as for `fa.score_mod` (clamped to real ones). Elementwise,
    `R[i, j] = body(batch, head, q, kv, captures...) ? S[i, j] : -inf`.
    `log2_domain` has no effect (a masked score is -inf in any unit).

    ```mlir
    %m = fa.mask_mod %s at [%q0, %k0] in [%c113, %c203] head [%b, %h]
        captures(%docs : tensor<203xi32>) : tensor<64x32xf32> {
    ^bb0(%bb: index, %hh: index, %i: index, %j: index, %d: tensor<203xi32>):
      %di = tensor.extract %d[%i] : tensor<203xi32>
      %dj = tensor.extract %d[%j] : tensor<203xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      fa.yield %same : i1
    }
    ```
  }];
}

def FA_RowMaxOp : FA_TileOp<"row_max"> {
  let summary = "m[i] = max_j S[i, j] (-inf for a fully masked row)";
  let description = [{
    ```mlir
    %m = fa.row_max %s : tensor<64x32xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins FA_F32Tile2D:$input);
  let results = (outs FA_F32Tile1D:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def FA_RowSumOp : FA_TileOp<"row_sum"> {
  let summary = "l[i] = sum_j P[i, j]";
  let description = [{
    ```mlir
    %l = fa.row_sum %p : tensor<64x32xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins FA_F32Tile2D:$input);
  let results = (outs FA_F32Tile1D:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

// Shapes and element types match; a GPU layout may differ (a deferred
// scale on the input is applied, the result holds plain values).
def FA_ExpShiftedOp : FA_TileOp<"exp_shifted", [AllShapesMatch<["input", "result"]>,
                                                AllElementTypesMatch<["input", "result"]>]> {
  let summary = "P = exp(S - m[i]) row-wise (exp2 with base2), 0 where S = -inf";
  let description = [{
    With a 2-D `input` and 1-D `shift`: `P[i, j] = exp(S[i, j] - m[i])`.
    With two 1-D operands: `r[i] = exp(a[i] - b[i])`, which is the online
    softmax's rescale factor `exp(m_old - m_new)`. `base2` selects `exp2`.
    Where the input is `-inf` the result is exactly 0, even when the shift is
    `-inf` too: a masked score stays masked, and a row that has seen no key
    yet has nothing to rescale. This is what keeps fully masked rows NaN-free.

    ```mlir
    %p = fa.exp_shifted %s, %m {base2} : tensor<64x32xf32>, tensor<64xf32>
    %alpha = fa.exp_shifted %m_old, %m_new {base2} : tensor<64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins FA_F32Tile:$input, FA_F32Tile1D:$shift, UnitAttr:$base2);
  let results = (outs FA_F32Tile:$result);
  let assemblyFormat = [{
    $input `,` $shift attr-dict `:` type($input) `,` type($shift)
    custom<ResultTypeIfDistinct>(ref(type($input)), type($result))
  }];
  let hasVerifier = 1;
}

def FA_ScaleRowsOp : FA_TileOp<"scale_rows", [AllTypesMatch<["input", "result"]>]> {
  let summary = "X[i, j] * r[i]: rescale an accumulator or normalise P";
  let description = [{
    With a 1-D `input`, `x[i] * r[i]` (on the GPU: a quad-partial running
    sum rescaled by a full row factor, which `arith.mulf` cannot state
    because the two layouts differ).

    ```mlir
    %acc_rescaled = fa.scale_rows %acc, %alpha : tensor<64x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins FA_F32Tile:$input, FA_F32Tile1D:$factor);
  let results = (outs FA_F32Tile:$result);
  let assemblyFormat = [{
    $input `,` $factor attr-dict `:` type($input) `,` type($factor)
  }];
  let hasVerifier = 1;
}

def FA_TileMatmulOp : FA_TileOp<"matmul", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "acc + alpha · op(A)·op(B), f32 accumulation";
  let description = [{
    `op(X)` is `Xᵀ` when `transpose_a` / `transpose_b` is set. A and B may be
    f16, bf16 or f32, or both f8E4M3FN (the fp8 forward's P·V, P rounded
    to e4m3); products are taken in f32. Every matmul of the forward (P·V)
    and backward (Pᵀ·dO, dO·Vᵀ, dSᵀ·Q, dS·K) is one of these.

    ```mlir
    %acc1 = fa.matmul %p, %v_tile, %acc : tensor<64x32xf32>, tensor<32x64xbf16>, tensor<64x64xf32>
    %dk1 = fa.matmul %ds, %q_tile, %dk {transpose_a, alpha = 0.125 : f32}
        : tensor<64x32xf32>, tensor<64x64xbf16>, tensor<32x64xf32>
    ```
  }];
  let arguments = (ins FA_MmaTile2D:$lhs, FA_MmaTile2D:$rhs, FA_F32Tile2D:$acc,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       OptionalAttr<F32Attr>:$alpha);
  let results = (outs FA_F32Tile2D:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def FA_RowDotOp : FA_TileOp<"row_dot"> {
  let summary = "D[i] = sum_e dO[i, e] · O[i, e] (the backward's rowsum(dO ∘ O))";
  let description = [{
    ```mlir
    %d = fa.row_dot %do_tile, %o_tile : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins FA_Tile2D:$lhs, FA_Tile2D:$rhs);
  let results = (outs FA_F32Tile1D:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def FA_SoftmaxGradOp : FA_TileOp<"softmax_grad", [AllTypesMatch<["probs", "result"]>]> {
  let summary = "dS = P ∘ (dP - D[i]): the softmax Jacobian applied to dP";
  let description = [{
    ```mlir
    %ds = fa.softmax_grad %p, %dp, %d : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins FA_F32Tile2D:$probs, FA_F32Tile2D:$grad_probs,
                       FA_F32Tile1D:$row_dot);
  let results = (outs FA_F32Tile2D:$result);
  let assemblyFormat = [{
    $probs `,` $grad_probs `,` $row_dot attr-dict `:` type($probs) `,`
    type($grad_probs) `,` type($row_dot)
  }];
  let hasVerifier = 1;
}

def FA_SoftcapGradOp : FA_TileOp<"softcap_grad", [AllTypesMatch<["grad", "scores", "result"]>]> {
  let summary = "dS ∘ (1 - (S / softcap)²): the chain rule through the softcap's tanh";
  let description = [{
    `scores` are the capped scores `S = softcap * tanh(x / softcap)`, so
    `dS/dx = 1 - (S / softcap)^2`.

    ```mlir
    %dx = fa.softcap_grad %ds, %s {softcap = 30.0 : f32} : tensor<64x32xf32>, tensor<64x32xf32>
    ```
  }];
  let arguments = (ins FA_F32Tile2D:$grad, FA_F32Tile2D:$scores, F32Attr:$softcap);
  let results = (outs FA_F32Tile2D:$result);
  let assemblyFormat = [{
    $grad `,` $scores attr-dict `:` type($grad) `,` type($scores)
  }];
}

#endif // FA_DIALECT_FA_IR_FATILEOPS_TD
