//===- FAAttrs.td - fa dialect attributes ------------------*- tablegen -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_IR_FAATTRS_TD
#define FA_DIALECT_FA_IR_FAATTRS_TD

include "fa/Dialect/FA/IR/FADialect.td"
include "mlir/IR/EnumAttr.td"

def FA_MaskKind : I32EnumAttr<"MaskKind", "which keys a query may attend to", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Causal", 1, "causal">,
    I32EnumAttrCase<"CausalTopLeft", 2, "causal_top_left">,
    I32EnumAttrCase<"Window", 3, "window">
  ]> {
  let cppNamespace = "::mlir::fa";
  // The kind is a parameter of #fa.mask, not an attribute of its own.
  let genSpecializedAttr = 0;
}

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
    EnumParameter<FA_MaskKind>:$kind,
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
  let summary = "Tile configuration: block_m, block_n, pipeline stages, warps";
  let description = [{
    How an attention op is tiled: `block_m` query rows per block, `block_n`
    key/value rows per inner-loop step, `stages` buffers in the load pipeline
    and `warps` warps per thread block. `fa-tile` reads `block_m` and
    `block_n`; the GPU conversions read all four. Block sizes are powers of
    two so that tiles map onto MMA fragments and shared-memory swizzles.

    Example:

    ```mlir
    #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>
    ```
  }];
  let parameters = (ins "int64_t":$blockM, "int64_t":$blockN,
                        "int64_t":$stages, "int64_t":$warps);
  let assemblyFormat = [{
    `<` `block_m` `=` $blockM `,` `block_n` `=` $blockN `,`
        `stages` `=` $stages `,` `warps` `=` $warps `>`
  }];
  let genVerifyDecl = 1;
}

#endif // FA_DIALECT_FA_IR_FAATTRS_TD
