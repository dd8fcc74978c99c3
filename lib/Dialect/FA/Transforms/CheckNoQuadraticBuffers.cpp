//===- CheckNoQuadraticBuffers.cpp - fa-check-no-quadratic-buffers --------===//
//
// Part of fa-mlir.
//
// FlashAttention's memory claim, checked on the IR: after tiling, no value
// (tensor or memref) has one dimension that can reach M and another that can
// reach N, i.e. nothing can hold the M×N score or probability matrix.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/Transforms/Passes.h"

#include "mlir/Interfaces/ValueBoundsOpInterface.h"

#include <limits>

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_FACHECKNOQUADRATICBUFFERS
#include "fa/Dialect/FA/Transforms/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

namespace {

/// The largest size dimension `dim` of `value` can take; int64 max if the
/// analysis finds no constant bound.
static int64_t upperBoundOfDim(Value value, int64_t dim) {
  auto type = cast<ShapedType>(value.getType());
  if (!type.isDynamicDim(dim))
    return type.getDimSize(dim);
  FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, ValueBoundsConstraintSet::Variable(value, dim),
      /*stopCondition=*/nullptr, /*closedUB=*/true);
  return succeeded(bound) ? *bound : std::numeric_limits<int64_t>::max();
}

struct FACheckNoQuadraticBuffersPass
    : fa::impl::FACheckNoQuadraticBuffersBase<FACheckNoQuadraticBuffersPass> {
  using FACheckNoQuadraticBuffersBase::FACheckNoQuadraticBuffersBase;

  /// Emits an error and returns true if `value` could hold an M×N matrix.
  bool isQuadratic(Value value, Operation *where) {
    auto type = dyn_cast<ShapedType>(value.getType());
    if (!type || !type.hasRank())
      return false;
    SmallVector<int64_t> bounds;
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      bounds.push_back(upperBoundOfDim(value, dim));
    for (int64_t i = 0; i < type.getRank(); ++i)
      for (int64_t j = 0; j < type.getRank(); ++j) {
        if (i == j || bounds[i] < queryLen || bounds[j] < keyLen)
          continue;
        where->emitError() << "value of type " << value.getType()
                           << " can hold an M x N matrix (dimension " << i
                           << " reaches M = " << static_cast<int64_t>(queryLen) << ", dimension "
                           << j << " reaches N = " << static_cast<int64_t>(keyLen) << ")";
        return true;
      }
    return false;
  }

  void runOnOperation() override {
    if (queryLen <= 0 || keyLen <= 0) {
      getOperation().emitError(
          "fa-check-no-quadratic-buffers needs query-len > 0 and key-len > 0");
      return signalPassFailure();
    }
    bool found = false;
    getOperation().walk([&](Operation *op) {
      for (Value result : op->getResults())
        found |= isQuadratic(result, op);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            found |= isQuadratic(arg, op);
    });
    if (found)
      signalPassFailure();
  }
};

} // namespace
