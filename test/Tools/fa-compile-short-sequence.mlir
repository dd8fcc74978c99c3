// A .mlir input whose M and N are below its tile: fa-compile checks and
// describes the tile fa-tile will use (each block shrunk to the sequence
// rounded up to a power of two: 113 -> 128 keeps block_m = 128, 50 -> 64),
// the same rule (clampBlockToSequence), so the manifest matches the kernel.
// RUN: rm -rf %t && fa-compile %s -o %t
// RUN: FileCheck %s < %t/short_seq.json
// CHECK: "tile": {"block_m": 128, "block_n": 64, "stages": 2, "warps": 4}
// CHECK: "block": [128, 1, 1]
func.func @short_seq(%q: tensor<1x2x113x64xbf16>, %k: tensor<1x2x50x64xbf16>, %v: tensor<1x2x50x64xbf16>) -> tensor<1x2x113x64xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x2x113x64xbf16>, tensor<1x2x50x64xbf16>, tensor<1x2x50x64xbf16>) -> tensor<1x2x113x64xbf16>
  return %o : tensor<1x2x113x64xbf16>
}
