//===- FAOps.td - fa dialect operations --------------------*- tablegen -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_IR_FAOPS_TD
#define FA_DIALECT_FA_IR_FAOPS_TD

include "fa/Dialect/FA/IR/FADialect.td"
include "fa/Dialect/FA/IR/FAAttrs.td"
include "fa/Dialect/FA/IR/FATileOps.td"
include "fa/Dialect/FA/IR/FAGPUOps.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Options shared by the forward and backward op. The verifier checks them in
// one place (verifyAttentionOptions in FAOps.cpp).
defvar FA_AttentionOptions = (ins
  OptionalAttr<FA_MaskAttr>:$mask,
  OptionalAttr<F32Attr>:$scale,
  OptionalAttr<F32Attr>:$softcap,
  OptionalAttr<FA_TileAttr>:$tile,
  OptionalAttr<FA_BlockSparseAttr>:$block_sparse
);

// Accessors shared by both ops: the defaults of docs/design.md's semantics.
defvar FA_AttentionOptionAccessors = [{
    /// The mask, `none` when absent.
    ::mlir::fa::MaskAttr getMaskOrDefault() {
      if (auto mask = getMaskAttr())
        return mask;
      return ::mlir::fa::MaskAttr::get(getContext(), ::mlir::fa::MaskKind::None);
    }
    /// The score scale, 1/sqrt(D) when absent.
    double getScaleOrDefault() {
      if (auto scale = getScaleAttr())
        return scale.getValueAsDouble();
      return 1.0 / std::sqrt(static_cast<double>(getHeadDim()));
    }
    /// The softcap, 0 (off) when absent.
    double getSoftcapOrZero() {
      if (auto softcap = getSoftcapAttr())
        return softcap.getValueAsDouble();
      return 0.0;
    }
    /// D, the head dimension of Q and K (ShapedType::kDynamic if unknown).
    int64_t getHeadDim() {
      return ::llvm::cast<::mlir::RankedTensorType>(getQuery().getType())
          .getDimSize(3);
    }
}];

// The variant regions and their captured operands (fa/Dialect/FA/IR/
// ModRegions.h states and checks their contract).
defvar FA_ModRegionsFormat = [{
    (`captures` `(` $captures^ `)`)? attr-dict
    (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
    `:` functional-type(operands, results)
}];

def FA_AttentionOp : FA_Op<"attention", [Pure, AttrSizedOperandSegments,
                                         IsolatedFromAbove]> {
  let summary = "Scaled dot-product attention forward: O (and LSE) from Q, K, V";
  let description = [{
    Computes `O = softmax(mask(alibi(softcap(scale * Q Kᵀ)))) V` for every batch and
    query head, and optionally the log-sum-exp of the scores, `LSE`, which the
    backward pass needs.

    Operands and results, with logical shapes:

    * `query` `[B, Hq, M, D]`, `key` `[B, Hkv, N, D]`, `value` `[B, Hkv, N, Dv]`,
      all of one element type: f16, bf16 or f8E4M3FN;
    * `descale`: for f8E4M3FN inputs, exactly three descale factors for Q,
      K and V (the true value is the stored value times its factor): f32
      scalars (per tensor), or f32 tensors `[B, Hkv]` (per batch and KV
      head, as FlashAttention-3's API has them; a query head uses its KV
      head's); none for f16 and bf16;
    * `alibi_slopes` (optional): f32 ALiBi slopes, `[Hq]` or `[B, Hq]`, as
      FlashAttention's `alibi_slopes`: after the softcap, the score of query
      `i` and key `j` in head `h` gets `-slope_h * |i + N - M - j|` added
      (bottom-right aligned, like the causal mask);
    * `output` `[B, Hq, M, Dv]`: the input element type, or bf16 for
      f8E4M3FN inputs;
    * `lse` (optional) `[B, Hq, M]`, f32, natural log.

    `Hq` must be a multiple of `Hkv`; query head `h` reads key/value head
    `h / (Hq / Hkv)`.

    Variants the attributes do not name are regions, as FlexAttention's
    functions are:

    * `score_mod` (optional): `^bb0(%score: f32, %b: index, %h: index,
      %q_idx: index, %kv_idx: index, %captured...)` yielding the new f32
      score; applied after scale, softcap and ALiBi, before the masks;
    * `mask_mod` (optional): `^bb0(%b: index, %h: index, %q_idx: index,
      %kv_idx: index, %captured...)` yielding an i1, true where key `kv_idx`
      is visible to query `q_idx`; and-ed with `mask`;
    * `captures`: the values the regions read (each region gets all of them
      as its trailing arguments, in order): f16/bf16/f32/integer/index
      scalars or ranked tensors of those, e.g. a `[Hq, 2N-1]` bias table or
      per-key document ids. They are kernel parameters: new values never
      recompile.

    `h` is the query head. The bodies hold arith and math ops and
    `tensor.extract` of a captured tensor, ended by `fa.yield`; the op is
    isolated from above, so a region's text alone says what it computes.
    Attributes: `mask` (`#fa.mask`, default none), `scale`
    (f32, default `1/sqrt(D)`, must be finite), `softcap` (f32, default 0 =
    off, must be >= 0), `tile` (`#fa.tile`, used by the lowering passes)
    and `block_sparse` (`#fa.block_sparse`: the GPU kernel takes a block
    mask at launch and visits only the KV blocks it lists).
    Accumulation and softmax statistics are f32. A query row with no visible
    key gives `O = 0` and `LSE = -inf`.

    Example:

    ```mlir
    %o, %lse = fa.attention %q, %k, %v
        {mask = #fa.mask<causal>, scale = 0.125 : f32,
         tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}
        : (tensor<2x8x1024x64xbf16>, tensor<2x2x1024x64xbf16>,
           tensor<2x2x1024x64xbf16>)
        -> (tensor<2x8x1024x64xbf16>, tensor<2x8x1024xf32>)

    // ALiBi with one slope per query head.
    %o2 = fa.attention %q, %k, %v alibi(%slopes) {mask = #fa.mask<causal>}
        : (tensor<2x8x1024x64xbf16>, tensor<2x2x1024x64xbf16>,
           tensor<2x2x1024x64xbf16>, tensor<8xf32>)
        -> tensor<2x8x1024x64xbf16>

    // A relative-position bias read from a captured table, and a
    // sliding window of 256 keys as a mask_mod.
    %o3 = fa.attention %q, %k, %v captures(%bias)
        score_mod {
        ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
             %table: tensor<8x2047xf32>):
          %c1023 = arith.constant 1023 : index
          %d = arith.subi %i, %j : index
          %at = arith.addi %d, %c1023 : index
          %bias = tensor.extract %table[%h, %at] : tensor<8x2047xf32>
          %r = arith.addf %s, %bias : f32
          fa.yield %r : f32
        }
        mask_mod {
        ^bb0(%b: index, %h: index, %i: index, %j: index,
             %table: tensor<8x2047xf32>):
          %c256 = arith.constant 256 : index
          %d = arith.subi %i, %j : index
          %near = arith.cmpi ult, %d, %c256 : index
          fa.yield %near : i1
        }
        : (tensor<2x8x1024x64xbf16>, tensor<2x2x1024x64xbf16>,
           tensor<2x2x1024x64xbf16>, tensor<8x2047xf32>)
        -> tensor<2x8x1024x64xbf16>
    ```
  }];
  let arguments = !con((ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    Variadic<AnyTypeOf<[F32, RankedTensorOf<[F32]>]>>:$descale,
    Optional<AnyRankedTensor>:$alibi_slopes,
    Variadic<AnyType>:$captures
  ), FA_AttentionOptions);
  let results = (outs
    AnyRankedTensor:$output,
    Optional<AnyRankedTensor>:$lse
  );
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);
  let assemblyFormat = !strconcat([{
    $query `,` $key `,` $value (`descale` `(` $descale^ `)`)?
    (`alibi` `(` $alibi_slopes^ `)`)?
  }], FA_ModRegionsFormat);
  let hasVerifier = 1;
  // The variant regions are checked once their ops have verified.
  let hasRegionVerifier = 1;
  let extraClassDeclaration = FA_AttentionOptionAccessors;
}

def FA_AttentionGradOp : FA_Op<"attention_grad", [Pure, AttrSizedOperandSegments,
                                                  IsolatedFromAbove]> {
  let summary = "Scaled dot-product attention backward: dQ, dK, dV";
  let description = [{
    The gradient of `fa.attention` with respect to its inputs, given the
    forward output `O`, its gradient `dO`, and the forward `LSE`. The softmax
    probabilities are recomputed from `LSE` (`P = exp(S - LSE)`), so nothing
    of size `M x N` is saved between forward and backward.

    Operands: `query`, `key`, `value` and `output` as for `fa.attention`,
    `grad_output` (`dO`) of the type of `output`, `lse` `[B, Hq, M]` f32, and
    the forward's `alibi_slopes` if it had them (`alibi(%slopes)`). The ALiBi
    bias is a constant of the scores: it changes P, and so every gradient,
    but no gradient of the slopes is computed (as in FlashAttention).
    Results: `grad_query`, `grad_key` and `grad_value` with the types of
    `query`, `key` and `value`. `grad_key` and `grad_value` are summed over the
    query heads that share a key/value head. Element types are f16 or bf16
    (there is no f8E4M3FN backward). The attributes, `captures`,
    `score_mod` and `mask_mod` mean what they mean on `fa.attention` and
    must match the forward op's.

    Example:

    ```mlir
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
        {mask = #fa.mask<causal>}
        : (tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>,
           tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>,
           tensor<1x4x256x64xf16>, tensor<1x4x256xf32>)
        -> (tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>,
            tensor<1x4x256x64xf16>)
    ```
  }];
  let arguments = !con((ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    AnyRankedTensor:$output,
    AnyRankedTensor:$grad_output,
    AnyRankedTensor:$lse,
    Optional<AnyRankedTensor>:$alibi_slopes,
    Variadic<AnyType>:$captures
  ), FA_AttentionOptions);
  let results = (outs
    AnyRankedTensor:$grad_query,
    AnyRankedTensor:$grad_key,
    AnyRankedTensor:$grad_value
  );
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);
  let assemblyFormat = !strconcat([{
    $query `,` $key `,` $value `,` $output `,` $grad_output `,` $lse
    (`alibi` `(` $alibi_slopes^ `)`)?
  }], FA_ModRegionsFormat);
  let hasVerifier = 1;
  // The variant regions are checked once their ops have verified.
  let hasRegionVerifier = 1;
  let extraClassDeclaration = FA_AttentionOptionAccessors;
}

def FA_YieldOp : FA_Op<"yield", [Pure, Terminator,
    ParentOneOf<["AttentionOp", "AttentionGradOp", "ScoreModOp", "MaskModOp"]>]> {
  let summary = "Ends a score_mod or mask_mod region with its value";
  let description = [{
    ```mlir
    fa.yield %score : f32
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // FA_DIALECT_FA_IR_FAOPS_TD
