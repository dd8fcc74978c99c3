//===- BackwardEdges.cpp - the backward's preprocess and postprocess ------===//
//
// Part of fa-mlir.
//
// Two small kernels around the main one, the same on every chip: each
// block takes kBackwardRowsPerBlock query rows of one (batch, head),
// reads its tiles with fa.load_fragment into the accumulator layout, and
// applies the L2 IR's op to them (fa.row_dot for D = rowsum(dO ∘ O), the
// arith.truncf of dQ's accumulator), which fa-gpu-lower-fragments lowers
// with the chip-neutral patterns.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/BackwardKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::fa;
using ::fa::abi::BackwardStep;

std::string mlir::fa::backwardEntryName(StringRef name, BackwardStep step) {
  return (name + "_" + ::fa::abi::backwardStepName(step)).str();
}

namespace {
/// 16 rows per warp, one m-tile: 8 warps cover the block's rows.
constexpr int64_t kEdgeWarps = kBackwardEdgeThreads / 32;
static_assert(16 * kEdgeWarps == ::fa::abi::kBackwardRowsPerBlock,
              "one m16 tile per warp covers the block's rows");

/// An edge kernel's signature, coordinates and tile layout.
struct EdgeKernel {
  KernelArgs args;
  GridCoords grid;
  FragmentLayoutAttr layout;

  EdgeKernel(OpBuilder &b, gpu::GPUModuleOp module,
             const AttentionKernelConfig &c, StringRef name, BackwardStep step)
      : args(KernelArgs::create(b, module, c.elementType,
                                backwardEntryName(name, step), 32 * kEdgeWarps,
                                ::fa::abi::backwardKernelParams(step, c.alibi))),
        layout(FragmentLayoutAttr::get(b.getContext(), kEdgeWarps, 1)) {
    Location loc = args.func().getLoc();
    grid.queryBlock = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    grid.head = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
    grid.batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
    grid.queryStart = arith::MulIOp::create(
        b, loc, grid.queryBlock,
        arith::ConstantIndexOp::create(b, loc,
                                       ::fa::abi::kBackwardRowsPerBlock));
    grid.queryLen = args.index(b, "q_len");
  }

  RankedTensorType tileType(ArrayRef<int64_t> trailing, Type element) const {
    SmallVector<int64_t> shape = {::fa::abi::kBackwardRowsPerBlock};
    shape.append(trailing.begin(), trailing.end());
    return RankedTensorType::get(shape, element, layout);
  }

  /// Rows [q0, q0 + 128) of tensor `name` ([B, H, M, width]), in
  /// fa.accumulate_fragment's MMA-block order if `mmaBlocks`.
  Value load(OpBuilder &b, Location loc, StringRef name, int64_t width,
             Type element, bool mmaBlocks = false) const {
    auto load = LoadFragmentOp::create(
        b, loc, tileType({width}, element), args[name],
        grid.tensorBase(b, loc, args, name, grid.head), grid.queryStart,
        grid.queryLen, args.index(b, (name + "_stride_s").str()),
        b.getF32FloatAttr(0.0));
    load.setMmaBlocks(mmaBlocks);
    return load;
  }
};
} // namespace

/// D = rowsum(dO ∘ O): the L2 fa.row_dot on this block's rows.
static void buildPreprocess(OpBuilder &b, gpu::GPUModuleOp module,
                            const AttentionBackward &backward,
                            const AttentionKernelConfig &c, StringRef name) {
  OpBuilder::InsertionGuard guard(b);
  EdgeKernel kernel(b, module, c, name, BackwardStep::Preprocess);
  Location loc = kernel.args.func().getLoc();
  // The negative control has no D: the kernel exists (the ABI launches
  // three) and writes nothing.
  if (RowDotOp rowDot = backward.rowDot) {
    IRMapping operands;
    operands.map(rowDot.getLhs(),
                 kernel.load(b, loc, "do", c.valueDim, c.elementType));
    operands.map(rowDot.getRhs(),
                 kernel.load(b, loc, "o", c.valueDim, c.elementType));
    Operation *rows = b.clone(*rowDot, operands);
    rows->getResult(0).setType(kernel.tileType({}, b.getF32Type()));
    StoreFragmentOp::create(
        b, loc, rows->getResult(0), kernel.args["delta"],
        kernel.grid.tensorBase(b, loc, kernel.args, "delta", kernel.grid.head),
        kernel.grid.queryStart, kernel.grid.queryLen, Value());
  }
  gpu::ReturnOp::create(b, loc);
}

/// dQ = the f32 accumulator (times the deferred α) in the input type: the
/// L2 arith.truncf.
static void buildPostprocess(OpBuilder &b, gpu::GPUModuleOp module,
                             const AttentionBackward &backward,
                             const AttentionKernelConfig &c, StringRef name,
                             GradQueryOrder order) {
  OpBuilder::InsertionGuard guard(b);
  EdgeKernel kernel(b, module, c, name, BackwardStep::Postprocess);
  Location loc = kernel.args.func().getLoc();
  AttentionBackward a = backward; // op handles are not const-correct
  IRMapping operands;
  Value accumulated = kernel.load(b, loc, "dq_acc", c.headDim, b.getF32Type(),
                                  order == GradQueryOrder::MmaBlocks);
  // The α the main kernel left out of every dS (deferredGradientScale).
  if (FloatAttr alpha = deferredGradientScale(backward))
    accumulated = scaleTile(b, loc, accumulated, alpha);
  operands.map(a.gradQueryCast.getIn(), accumulated);
  Operation *gradQuery = b.clone(*a.gradQueryCast, operands);
  gradQuery->getResult(0).setType(kernel.tileType({c.headDim}, c.elementType));
  StoreFragmentOp::create(
      b, loc, gradQuery->getResult(0), kernel.args["dq"],
      kernel.grid.tensorBase(b, loc, kernel.args, "dq", kernel.grid.head),
      kernel.grid.queryStart, kernel.grid.queryLen,
      kernel.args.index(b, "dq_stride_s"));
  gpu::ReturnOp::create(b, loc);
}

LogicalResult mlir::fa::buildBackwardEdgeKernels(OpBuilder &b,
                                                 gpu::GPUModuleOp module,
                                                 const AttentionBackward &backward,
                                                 const AttentionKernelConfig &c,
                                                 StringRef name,
                                                 GradQueryOrder order) {
  buildPreprocess(b, module, backward, c, name);
  buildPostprocess(b, module, backward, c, name, order);
  return success();
}
