//===- ModRegions.cpp - the score_mod / mask_mod region contract ----------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/IR/ModRegions.h"
#include "fa/Dialect/FA/IR/FAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::fa;

StringRef mlir::fa::modName(ModKind kind) {
  return kind == ModKind::Score ? "score_mod" : "mask_mod";
}

static bool isCapturableScalar(Type type) {
  return isa<IntegerType, IndexType, Float16Type, BFloat16Type, Float32Type>(
      type);
}

bool mlir::fa::isCapturableType(Type type) {
  // An empty tensor has no element to read, not even a clamped one.
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return isCapturableScalar(tensor.getElementType()) &&
           !tensor.getEncoding() && !llvm::is_contained(tensor.getShape(), 0);
  return isCapturableScalar(type);
}

LogicalResult mlir::fa::verifyCaptures(Operation *op, ValueRange captures) {
  return verifyCaptureTypes(op, captures.getTypes());
}

LogicalResult mlir::fa::verifyCaptureTypes(Operation *op, TypeRange types) {
  for (auto [position, type] : llvm::enumerate(types))
    if (!isCapturableType(type))
      return op->emitOpError()
             << "captured operand #" << position << " has type " << type
             << "; a capture is an f16, bf16, f32, integer or index scalar "
                "or a ranked tensor of those with no dimension of size 0";
  return success();
}

/// The ops a region may hold besides fa.yield: arith and math on scalars,
/// and reads of captured tensors.
static bool isAllowedModOp(Operation &op) {
  return isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
         isa<tensor::ExtractOp>(op);
}

LogicalResult mlir::fa::verifyModRegion(Operation *op, Region &region,
                                        ModKind kind, TypeRange captureTypes,
                                        bool optional) {
  StringRef name = modName(kind);
  if (region.empty()) {
    if (optional)
      return success();
    return op->emitOpError() << "needs a " << name << " body";
  }
  if (!region.hasOneBlock())
    return op->emitOpError() << name << " must have one block";
  Block &body = region.front();
  Builder b(op->getContext());
  SmallVector<Type> expected;
  if (kind == ModKind::Score)
    expected.push_back(b.getF32Type());
  expected.append(4, b.getIndexType());
  expected.append(captureTypes.begin(), captureTypes.end());
  if (body.getArgumentTypes() != TypeRange(expected)) {
    InFlightDiagnostic diag = op->emitOpError()
                              << name << " arguments must be (";
    llvm::interleaveComma(expected, diag);
    diag << ")" << (kind == ModKind::Score ? ": score, b, h, q_idx, kv_idx"
                                           : ": b, h, q_idx, kv_idx")
         << ", then the captured values; got (";
    llvm::interleaveComma(body.getArgumentTypes(), diag);
    return diag << ")";
  }
  if (body.empty() || !isa<YieldOp>(body.back()))
    return op->emitOpError() << name << " must end with fa.yield";
  for (Operation &nested : body.without_terminator()) {
    if (!isAllowedModOp(nested))
      return op->emitOpError()
             << name << ": '" << nested.getName()
             << "' is not allowed (arith and math ops, tensor.extract of a "
                "captured tensor, fa.yield)";
    if (nested.getNumRegions() != 0)
      return op->emitOpError() << name << ": '" << nested.getName()
                               << "' has a region; a " << name
                               << " body is straight-line code";
    if (auto extract = dyn_cast<tensor::ExtractOp>(nested)) {
      auto arg = dyn_cast<BlockArgument>(extract.getTensor());
      if (!arg || arg.getOwner() != &body)
        return op->emitOpError() << name
                                 << ": tensor.extract must read a captured "
                                    "tensor (an argument of the region)";
      continue;
    }
    for (Type type : nested.getResultTypes())
      if (isa<ShapedType>(type))
        return op->emitOpError()
               << name << ": '" << nested.getName() << "' makes a " << type
               << "; a " << name << " body computes on scalars";
  }
  auto yield = cast<YieldOp>(body.back());
  Type want = kind == ModKind::Score ? Type(b.getF32Type()) : b.getI1Type();
  if (yield.getValue().getType() != want)
    return op->emitOpError() << name << " must yield " << want << ", but yields "
                             << yield.getValue().getType();
  return success();
}

SmallVector<Value> mlir::fa::clampIndices(OpBuilder &b, Location loc,
                                          ValueRange indices,
                                          function_ref<Value(unsigned)> extent) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> clamped;
  for (auto [dim, index] : llvm::enumerate(indices)) {
    Value last = arith::SubIOp::create(b, loc, extent(dim), one);
    Value below = arith::MinSIOp::create(b, loc, index, last);
    clamped.push_back(arith::MaxSIOp::create(b, loc, below, zero));
  }
  return clamped;
}

Value mlir::fa::buildClampedExtract(OpBuilder &b, Location loc, Value tensor,
                                    ValueRange indices) {
  SmallVector<Value> clamped = clampIndices(b, loc, indices, [&](unsigned dim) {
    return tensor::DimOp::create(b, loc, tensor, dim).getResult();
  });
  return tensor::ExtractOp::create(b, loc, tensor, clamped);
}

FailureOr<SmallVector<Type>>
mlir::fa::tileCaptureTypes(Operation *op, ValueRange captures, Region &region,
                           ModKind kind) {
  SmallVector<Type> types;
  unsigned first = kind == ModKind::Score ? 5 : 4;
  for (auto [position, capture] : llvm::enumerate(captures)) {
    Type type = capture.getType();
    auto buffer = dyn_cast<MemRefType>(type);
    if (buffer && !region.empty() &&
        region.front().getNumArguments() > first + position) {
      auto tensor = dyn_cast<RankedTensorType>(
          region.front().getArgument(first + position).getType());
      Type element = tensor ? tensor.getElementType() : Type();
      bool sameElement =
          element && (buffer.getElementType() == element ||
                      (element.isIndex() &&
                       buffer.getElementType().isInteger(64)));
      if (!tensor || !sameElement || buffer.getShape() != tensor.getShape())
        return op->emitOpError()
               << "captured operand #" << position << " is a buffer of type "
               << type << ", which does not stand for the region's "
               << region.front().getArgument(first + position).getType();
      type = tensor;
    }
    types.push_back(type);
  }
  return types;
}

Value mlir::fa::inlineModRegion(OpBuilder &b, Region &region,
                                ValueRange leading, ValueRange captures,
                                CaptureReadBuilder readCapture,
                                ModOpLowering lowerOp) {
  Block &body = region.front();
  IRMapping mapping;
  unsigned position = 0;
  for (Value value : leading)
    mapping.map(body.getArgument(position++), value);
  for (Value value : captures)
    mapping.map(body.getArgument(position++), value);
  for (Operation &op : body.without_terminator()) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      SmallVector<Value> indices;
      for (Value index : extract.getIndices())
        indices.push_back(mapping.lookup(index));
      mapping.map(extract.getResult(),
                  readCapture(b, op.getLoc(),
                              mapping.lookup(extract.getTensor()), indices));
      continue;
    }
    if (lowerOp) {
      SmallVector<Value> operands;
      for (Value operand : op.getOperands())
        operands.push_back(mapping.lookup(operand));
      if (Value lowered = lowerOp(b, op, operands)) {
        mapping.map(op.getResult(0), lowered);
        continue;
      }
    }
    b.clone(op, mapping);
  }
  return mapping.lookup(cast<YieldOp>(body.getTerminator()).getValue());
}
