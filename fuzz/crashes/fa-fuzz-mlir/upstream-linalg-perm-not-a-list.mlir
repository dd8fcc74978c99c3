// Upstream MLIR 22: linalg.transpose whose permutation is not a bracketed
// list (here `= 1`) segfaults its parser (mlir-opt too); the fuzz run
// found `= @...`. fa-fuzz-mlir skips such inputs, the tools refuse them.
func.func @f(%b: tensor<2x3xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %r = linalg.transpose ins(%b : tensor<2x3xf32>) outs(%c : tensor<3x2xf32>) permutation = 1
  return %r : tensor<3x2xf32>
}
