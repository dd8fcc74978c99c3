//===- FAAttrs.td - fa dialect attributes ------------------*- tablegen -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_IR_FAATTRS_TD
#define FA_DIALECT_FA_IR_FAATTRS_TD

include "fa/Dialect/FA/IR/FADialect.td"

// The mask kind is the runtime's (FaMaskKind of fa/runtime/Mask.h, whose
// values the C API's fa_mask_kind gives): one enumeration for the dialect,
// the spec language and the runtime. FAAttrs.h names it mlir::fa::MaskKind.
def FA_MaskKindParameter : AttrParameter<"::mlir::fa::MaskKind",
    "which keys a query may attend to: none, causal, causal_top_left or window">;

def FA_MaskAttr : FA_Attr<"Mask", "mask"> {
  let summary = "Attention mask: none, causal, causal_top_left or window(left, right)";
  let description = [{
    Key `j` is visible to query `i` (with `M` queries and `N` keys) when:

    * `none`: always;
    * `causal` (bottom-right aligned, as FlashAttention >= 2.1):
      `j <= i + N - M`;
    * `causal_top_left` (as PyTorch SDPA `is_causal`): `j <= i`;
    * `window(left, right)` (bottom-right aligned):
      `i + N - M - left <= j <= i + N - M + right`, where `-1` means
      unbounded on that side.

    Example:

    ```mlir
    #fa.mask<causal>
    #fa.mask<window(128, 0)>
    ```
  }];
  let parameters = (ins
    FA_MaskKindParameter:$kind,
    DefaultValuedParameter<"int64_t", "-1">:$left,
    DefaultValuedParameter<"int64_t", "-1">:$right
  );
  let builders = [
    AttrBuilder<(ins "::mlir::fa::MaskKind":$kind), [{
      return $_get($_ctxt, kind, -1, -1);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True when the mask hides some keys from some queries.
    bool isMasking() const {
      return getKind() != MaskKind::None &&
             !(getKind() == MaskKind::Window && getLeft() == -1 &&
               getRight() == -1);
    }
  }];
}

def FA_TileAttr : FA_Attr<"Tile", "tile"> {
  let summary = "Tile configuration: block_m, block_n, pipeline stages, warps, schedule";
  let description = [{
    How an attention op is tiled: `block_m` query rows per block, `block_n`
    key/value rows per inner-loop step, `stages` buffers in the load pipeline
    and `warps` warps per thread block. `fa-tile` reads `block_m` and
    `block_n`; the GPU conversions read all four. Block sizes are powers of
    two so that tiles map onto MMA fragments and shared-memory swizzles.

    The optional `schedule` dictionary overrides the chip's tuned schedule
    knobs of the kernel built from the op (docs/tuning.md): each entry a
    knob's name with a bool, an integer or a string. `fa-gpu-distribute`
    refuses a knob its chip does not have, a value it does not take, and one
    it cannot build; the CPU lowering ignores them.

    Example:

    ```mlir
    #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>
    #fa.tile<block_m = 64, block_n = 128, stages = 2, warps = 8,
             schedule = {loads_query_rows_ahead = false, section_mib = 32}>
    ```
  }];
  let parameters = (ins "int64_t":$blockM, "int64_t":$blockN,
                        "int64_t":$stages, "int64_t":$warps,
                        OptionalParameter<"DictionaryAttr">:$schedule);
  let builders = [
    AttrBuilder<(ins "int64_t":$blockM, "int64_t":$blockN, "int64_t":$stages,
                     "int64_t":$warps,
                     CArg<"DictionaryAttr", "{}">:$schedule), [{
      return $_get($_ctxt, blockM, blockN, stages, warps,
                   schedule && !schedule.empty() ? schedule : DictionaryAttr());
    }]>
  ];
  let skipDefaultBuilders = 1;
  let assemblyFormat = [{
    `<` `block_m` `=` $blockM `,` `block_n` `=` $blockN `,`
        `stages` `=` $stages `,` `warps` `=` $warps
        (`,` `schedule` `=` $schedule^)? `>`
  }];
  let genVerifyDecl = 1;
}

def FA_BlockSparseAttr : FA_Attr<"BlockSparse", "block_sparse"> {
  let summary = "The KV blocks of each Q block come from a block mask at launch";
  let description = [{
    Declares that the kernel built from an attention op visits, for each
    `q_block` query rows, only the `kv_block`-key blocks that a block mask
    given at launch lists (FlexAttention's `BlockMask`): per (batch, head,
    Q block) a list of *partial* KV blocks, on which the mask (and
    `mask_mod`) is evaluated, and a list of *full* ones, every element of
    which is visible, on which it is not. A block in neither list is never
    loaded, so time follows the number of listed blocks.

    The lists are a schedule, not part of the math: they must cover every
    visible element, and a full block must be fully visible, as the block
    masks built from the op's own `mask_mod` are. The CPU lowering, which
    visits every block, ignores the attribute. Both sizes are powers of two
    from 16; the kernel's tile divides them (`fa-tile` caps `block_m` at
    `q_block` and `block_n` at `kv_block`).

    Example:

    ```mlir
    #fa.block_sparse<q_block = 128, kv_block = 128>
    ```
  }];
  let parameters = (ins "int64_t":$qBlock, "int64_t":$kvBlock);
  let assemblyFormat = [{
    `<` `q_block` `=` $qBlock `,` `kv_block` `=` $kvBlock `>`
  }];
  let genVerifyDecl = 1;
}


//===----------------------------------------------------------------------===//
// GPU layouts: where the elements of a tile live once it is distributed over
// the threads of a block (the encodings fa-gpu-distribute puts on tile types).
//===----------------------------------------------------------------------===//

def FA_FragmentLayoutAttr : FA_Attr<"FragmentLayout", "fragment"> {
  let summary = "An MMA accumulator tile (or its rows) held in registers";
  let description = [{
    The register layout of an `[R, C]` f32 (or f16/bf16) tile computed by
    tensor-core MMAs, as a tensor encoding. Warp `w` owns rows
    `[16·mTiles·w, 16·mTiles·(w + 1))`, as `mTiles` slabs of 16 rows;
    within each 16 × 8 piece lane `l` holds rows `l/4` and `l/4 + 8` and
    columns `2·(l%4)` and `2·(l%4) + 1`. This is the accumulator of both
    `mma.sync.m16n8k16` (sm_80) and `wgmma.m64nNk16` (sm_90a: a warpgroup's
    four warps hold 16 rows each), so every per-row and per-element lowering
    written against it serves both.

    On a 1-D `[R]` tensor it is the layout of row statistics: a thread holds
    the values of its `2·mTiles` rows. With `quadPartial` each of the four
    lanes that share a row holds a partial sum over its own columns, to be
    added across the quad before use (a running sum stays partial through
    the KV loop and is reduced once, in the epilogue).

    With `columnGroups = g` (> 1) the warps form `g` groups that split the
    columns instead of sharing them: warp `w` is warp `w mod (warps / g)`
    of a layout of `warps / g` warps over columns `[j·C/g, (j + 1)·C/g)`,
    `j = w / (warps / g)`. sm_90a's backward computes S on 64 query rows
    this way, each warpgroup on its own 64 keys; no row reduction crosses
    the groups (the patterns that need one refuse such a layout).

    With `deferredScale = c` the registers hold `x / c` for each logical
    element `x` (scores straight from the MMA, before `scale · log2 e`):
    the consumers apply `c` where it is cheapest (once per row after a row
    max; folded into the exponent's FFMA). Only values whose every use can
    do that get it (fa-gpu-distribute decides). With `deferredDescale`
    as well, the scores are e4m3 ones and the registers hold `x / (c·d)`,
    `d` the run-time descale of the `fa.qk_scores` they come from (Q's ·
    K's): the consumers multiply by `c·d` (one multiply per kernel) where
    they would by `c`, so a score costs no multiply of its own. The row
    max commutes with `c·d` only for `d > 0`: descales are quantisation
    scales, positive by contract (docs/fp8-plan.md, ABI).

    ```mlir
    tensor<128x64xf32, #fa.fragment<warps = 4, mTiles = 2>>
    tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2, quadPartial = true>>
    tensor<128x64xf32, #fa.fragment<warps = 4, mTiles = 2, deferredScale = 0.18 : f32>>
    tensor<64x128xf32, #fa.fragment<warps = 8, mTiles = 1, columnGroups = 2>>
    ```
  }];
  let parameters = (ins "int64_t":$warps, "int64_t":$mTiles,
                        DefaultValuedParameter<"bool", "false">:$quadPartial,
                        OptionalParameter<"FloatAttr">:$deferredScale,
                        DefaultValuedParameter<"int64_t", "1">:$columnGroups,
                        DefaultValuedParameter<"bool", "false">:$deferredDescale);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [
    // A plain accumulator layout: full rows, nothing deferred.
    AttrBuilder<(ins "int64_t":$warps, "int64_t":$mTiles,
                     CArg<"int64_t", "1">:$columnGroups), [{
      return $_get($_ctxt, warps, mTiles, /*quadPartial=*/false,
                   /*deferredScale=*/FloatAttr(), columnGroups,
                   /*deferredDescale=*/false);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Warps that share a group of columns (all of them, unsplit).
    int64_t getRowWarps() const { return getWarps() / getColumnGroups(); }
    /// Rows of the tile (16 per m-tile per warp of a column group).
    int64_t getRows() const { return 16 * getRowWarps() * getMTiles(); }
    /// The same layout with `quadPartial` set or cleared.
    FragmentLayoutAttr withQuadPartial(bool partial) const {
      return get(getContext(), getWarps(), getMTiles(), partial,
                 getDeferredScale(), getColumnGroups(), getDeferredDescale());
    }
    /// The same layout holding values divided by `scale` (null: none), and
    /// with `descaled` by the scores' run-time descale as well.
    FragmentLayoutAttr withDeferredScale(FloatAttr scale,
                                         bool descaled = false) const {
      return get(getContext(), getWarps(), getMTiles(), getQuadPartial(), scale,
                 getColumnGroups(), descaled);
    }
  }];
}

def FA_OperandLayoutAttr : FA_Attr<"OperandLayout", "operand"> {
  let summary = "The A operand of an MMA, as fragments in registers";
  let description = [{
    An `[R, K]` f16/bf16 tile held as the A operand of m16n8k16 (and of
    wgmma with A in registers): warp `w` owns the rows of
    `#fa.fragment<warps, mTiles>`, and per 16 × 16 piece each lane holds
    four pairs (rows `l/4`, `l/4 + 8`; columns `2·(l%4)`, `+8`), as
    `ldmatrix.x4` delivers them. `K` is padded to a multiple of 16 with
    zeros.

    ```mlir
    tensor<128x128xbf16, #fa.operand<warps = 4, mTiles = 2>>
    ```
  }];
  let parameters = (ins "int64_t":$warps, "int64_t":$mTiles);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def FA_SharedLayoutAttr : FA_Attr<"SharedLayout", "shared"> {
  let summary = "A tile in shared memory, row-major, 16-byte chunks XOR-swizzled";
  let description = [{
    An `[R, C]` tile stored in shared memory with rows of `rowElements`
    elements (`C` padded up to a multiple of 64, the zero-filled padding
    never read past the next multiple of 16). Logical 16-byte chunk `c` of
    row `r` sits at chunk `c ^ (r % 8)`, so that the eight rows one
    `ldmatrix` reads hit all 32 banks.

    ```mlir
    tensor<64x96xbf16, #fa.shared<rowElements = 128>>
    ```
  }];
  let parameters = (ins "int64_t":$rowElements);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def FA_TmaSharedLayoutAttr : FA_Attr<"TmaSharedLayout", "tma_shared"> {
  let summary = "A tile in shared memory as TMA writes it: column panels, 128B swizzle";
  let description = [{
    An `[R, C]` tile stored as `ceil(C / W)` column panels of `[R][W]`
    elements, `W = swizzleBytes / element bytes` (64 for 16-bit types), each
    row of a panel `swizzleBytes` long with the hardware's swizzle (16-byte
    chunk `c` of row `r` at `c ^ (r % 8)` within each 1024-byte atom). This
    is the layout `cp.async.bulk.tensor` writes with a `SWIZZLE_128B` tensor
    map whose box is `[R, W]`, and the one wgmma's shared-memory matrix
    descriptors read (sm_90a). Columns past `C` up to the panel edge are the
    copy's out-of-bounds zero fill.

    With `keyMajor = true` the `[R, C]` tile is stored as its transpose
    `[C, R]` in that layout (rows of `R` elements), with R's index permuted
    within each group of 32 by the e4m3 wgmma A fragment's order: row
    position `p = 16h + 4t + 2u + e` holds row `16h + 8u + 2t + e`
    (h, u, e in {0, 1}, t in 0..3). This is V of the fp8 forward as its
    producer warpgroup writes it (wgmma e4m3 takes B only K-major, and P's
    accumulator registers are the A fragment in that order, unshuffled).

    ```mlir
    tensor<128x128xbf16, #fa.tma_shared<swizzleBytes = 128>>
    tensor<128x128xf8E4M3FN, #fa.tma_shared<swizzleBytes = 128, keyMajor = true>>
    ```
  }];
  let parameters = (ins "int64_t":$swizzleBytes,
                        DefaultValuedParameter<"bool", "false">:$keyMajor);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // FA_DIALECT_FA_IR_FAATTRS_TD
