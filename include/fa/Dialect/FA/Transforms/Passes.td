//===- Passes.td - fa transformation passes ----------------*- tablegen -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_TRANSFORMS_PASSES_TD
#define FA_DIALECT_FA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FATile : Pass<"fa-tile", "func::FuncOp"> {
  let summary = "Tile fa.attention into (batch, head, Q block) × KV-block loops, 3-pass safe softmax";
  let description = [{
    Rewrites every `fa.attention` into loops over batch, query head and
    blocks of `block-m` query rows, with inner loops over blocks of
    `block-n` key/value rows, written in the fa tile ops. The softmax keeps
    its textbook three-pass "safe" form over the KV blocks:

    1. `m = max_j S` (row max over all KV blocks);
    2. `l = sum_j exp(S - m)`;
    3. `O = sum_j (exp(S - m) / l) · V`;

    each pass recomputing its score tile `S = scale · Q_blk K_blkᵀ`. Partial
    last blocks are zero-padded on load and masked (`fa.apply_mask` hides
    keys past N; rows past M are never stored). Causal and window masks
    shrink the KV loop's range to the blocks a Q block can see. No tensor
    of size M×N exists afterwards. A `tile = #fa.tile<...>` attribute on the
    op takes precedence over the pass options.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "64", "Query rows per block">,
    Option<"blockN", "block-n", "int64_t", "64", "Key/value rows per block">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def FAFuseOnlineSoftmax : Pass<"fa-fuse-online-softmax", "func::FuncOp"> {
  let summary = "Fuse the three softmax passes into one online-softmax loop with P·V";
  let description = [{
    Finds the row-max, sum-of-exp and normalised-P·V loops that `fa-tile`
    writes for one Q block and replaces them with a single KV loop that
    carries the running max `m`, running sum `l` and unnormalised
    accumulator `acc` as `scf.for` iter_args (FlashAttention, Algorithm 1):

        m_new = max(m, rowmax(S));   alpha = exp2(m - m_new)
        P = exp2(S - m_new);         l = alpha·l + rowsum(P)
        acc = alpha·acc + P·V

    Scores are produced in log2 units (`log2(e)` folded into the scale) so
    every exponential is an `exp2`. After the loop `O = acc / l` and
    `LSE = m·ln(2) + log(l)`; a row with no visible key keeps `l = 0` and
    gets `O = 0`, `LSE = -inf`.

    `test-omit-rescale` drops the `alpha` rescale: it exists only as the
    negative control that the numerical tests must catch.
  }];
  let options = [
    Option<"testOmitRescale", "test-omit-rescale", "bool", "false",
           "Negative control: leave out the alpha rescale (wrong on purpose)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def FARecomputeBackward : Pass<"fa-recompute-backward", "func::FuncOp"> {
  let summary = "Rewrite fa.attention_grad into KV-outer loops that recompute P from LSE";
  let description = [{
    1. `D = rowsum(dO ∘ O)` per query row.
    2. For each KV block (outer loop), for each query head of its group and
       each Q block (inner loops): recompute `S` and `P = exp(S - LSE)` from
       the saved LSE; `dV += Pᵀ·dO`; `dP = dO·Vᵀ`; `dS = P ∘ (dP - D)`;
       `dK += scale·dSᵀ·Q`; `dQ += scale·dS·K`.

    dK and dV of a KV block are complete when its loop ends (GQA sums the
    query heads of the group there); dQ accumulates in one f32 buffer of
    Q's shape. Nothing of size M×N exists.

    A `score_mod` g is applied as in the forward, and dS goes back through
    it: `dS ← dS ∘ g'(S)`, g' derived from the region by forward-mode
    differentiation; a region with an op that has no derivative rule is
    refused with one line naming it. A `mask_mod` is applied as in the
    forward.

    `test-omit-row-dot` drops `D` (`dS = P ∘ dP`) and
    `test-omit-score-mod-grad` the chain rule through a score_mod: only
    negative controls.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "64", "Query rows per block">,
    Option<"blockN", "block-n", "int64_t", "64", "Key/value rows per block">,
    Option<"testOmitRowDot", "test-omit-row-dot", "bool", "false",
           "Negative control: forget D = rowsum(dO ∘ O) (wrong on purpose)">,
    Option<"testOmitScoreModGrad", "test-omit-score-mod-grad", "bool", "false",
           "Negative control: treat a score_mod's derivative as 1 (wrong on purpose)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def FACheckNoQuadraticBuffers : Pass<"fa-check-no-quadratic-buffers", "func::FuncOp"> {
  let summary = "Fail if any value has a dimension of size M and another of size N";
  let description = [{
    An analysis that proves the IO claim of tiling: after `fa-tile`,
    `fa-fuse-online-softmax` and `fa-recompute-backward`, no tensor or
    memref value has one dimension that can reach `query-len` (M) and
    another that can reach `key-len` (N). Dynamic dimensions are bounded
    with the ValueBounds analysis; a dimension with no constant bound counts
    as unbounded, i.e. as able to reach both.
  }];
  let options = [
    Option<"queryLen", "query-len", "int64_t", "0", "M, the query sequence length">,
    Option<"keyLen", "key-len", "int64_t", "0", "N, the key sequence length">,
  ];
}

def FAIOReport : Pass<"fa-io-report", "ModuleOp"> {
  let summary = "Print FLOPs, HBM traffic and arithmetic intensity of each fa.attention";
  let description = [{
    For each `fa.attention`, prints the FLOPs and the HBM bytes read and
    written by (a) standard attention, which writes S and P (N×N per head)
    to HBM, and (b) the tiled form `fa-tile` produces with the given block
    sizes, which reads K and V once per Q block and never stores S or P.
    Also prints the on-chip bytes one Q block needs and whether that fits in
    `sram-bytes`. The closed forms are in docs/passes.md.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "64", "Query rows per block">,
    Option<"blockN", "block-n", "int64_t", "64", "Key/value rows per block">,
    Option<"sramBytes", "sram-bytes", "int64_t", "232448",
           "On-chip memory per thread block (H100: 227 KiB)">,
  ];
}

def FARaiseAttention : Pass<"fa-raise-attention", "func::FuncOp"> {
  let summary = "Raise attention written in linalg on tensors to fa.attention";
  let description = [{
    Finds `softmax(mask(scale · Q Kᵀ)) · V` as frontends write it in linalg
    on tensors and rewrites it into one `fa.attention`, so that the whole
    pipeline applies. Matched, from the P·V contraction up: contractions as
    `linalg.batch_matmul`, `linalg.matmul` or a contraction
    `linalg.generic`, K read transposed by the indexing map or through a
    `linalg.transpose`, accumulating into zeros; the softmax as
    `linalg.softmax` over the last dimension or decomposed (max-reduce,
    subtract, exp, sum-reduce, divide; subtract and exp fused or not,
    reductions read back by indexing map or `linalg.broadcast`); an
    optional additive causal mask (a constant −inf upper triangle, top-left
    or bottom-right aligned, or `select(j > i, −inf, 0)` on `linalg.index`,
    in the adding body or as a mask tensor of its own);
    an optional multiply or divide by a constant. 2-D, 3-D ([B·H, S, D]) and
    4-D operands, f16 and bf16. Anything else is left as it is, f32
    attention with a remark (no backend computes fa.attention in f32).
    GQA written as K and V [B, Hkv, N, D] broadcast over each group's heads
    (`linalg.broadcast` of a new dimension 2, collapsed to [B, Hq, N, D])
    becomes fa.attention's own GQA.
  }];
  let dependentDialects = ["mlir::fa::FADialect", "mlir::tensor::TensorDialect"];
}

#endif // FA_DIALECT_FA_TRANSFORMS_PASSES_TD
