// Upstream MLIR 22: linalg.broadcast with a dimensions entry past 64 bits
// segfaults its parser (mlir-opt too); fa-fuzz-mlir skips such inputs.
func.func @f(%a: tensor<2xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = linalg.broadcast ins(%a : tensor<2xf32>) outs(%b : tensor<2x3xf32>) dimensions = [200000000000000000000000]
  return %r : tensor<2x3xf32>
}
