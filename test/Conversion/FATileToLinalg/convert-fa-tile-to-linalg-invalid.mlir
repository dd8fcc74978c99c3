// RUN: fa-opt %s --split-input-file --verify-diagnostics --convert-fa-tile-to-linalg
// Tiles with a GPU layout (fa-gpu-distribute's output) are one thread's
// share of a tile: convert-fa-tile-to-linalg refuses them with one line
// rather than build a linalg.generic whose operand and result types
// disagree.

#row = #fa.fragment<warps = 4, mTiles = 2>
func.func @row_max(%s: tensor<128x64xf32, #row>) -> tensor<128xf32, #row> {
  // expected-error @+1 {{convert-fa-tile-to-linalg: 'fa.row_max' has tiles with a GPU layout (fa-gpu-distribute's output), which only fa-gpu-lower-fragments lowers}}
  %r = fa.row_max %s : tensor<128x64xf32, #row> -> tensor<128xf32, #row>
  return %r : tensor<128xf32, #row>
}

// -----

// A function that only passes such tiles along.
// expected-error @+1 {{convert-fa-tile-to-linalg: 'func.func' has tiles with a GPU layout}}
func.func @layouts(%a: tensor<64x96xbf16, #fa.shared<rowElements = 128>>) {
  return
}
