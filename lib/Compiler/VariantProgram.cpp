//===- VariantProgram.cpp - an fa.attention's regions for the runtime -----===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Compiler/VariantProgram.h"

#include "fa/Conversion/FAToGPU/KernelSkeleton.h"
#include "fa/Dialect/FA/IR/FAOps.h"
#include "fa/runtime/Spec.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace {
/// The runtime's name of a region value's type ("tensor" for a captured
/// tensor), or empty.
std::string valueTypeName(Type type) {
  if (isa<RankedTensorType>(type))
    return "tensor";
  return mlir::fa::captureElementName(type);
}

bool programOf(Region &region, ::fa::VariantProgram &program,
               std::string &error) {
  if (region.empty())
    return true;
  Block &body = region.front();
  llvm::DenseMap<Value, int32_t> numbers;
  auto name = [&](Value value, std::string &out) {
    out = valueTypeName(value.getType());
    if (out.empty())
      error = "the runtime states captured values and region values of f16, "
              "bf16, f32, i1, i8, i16, i32, i64 or index, not " +
              [&] {
                std::string text;
                llvm::raw_string_ostream os(text);
                value.getType().print(os);
                return text;
              }();
    return !out.empty();
  };
  for (BlockArgument arg : body.getArguments()) {
    std::string type;
    if (!name(arg, type))
      return false;
    numbers[arg] = static_cast<int32_t>(program.arguments.size());
    program.arguments.push_back(type);
  }
  for (Operation &op : body.without_terminator()) {
    ::fa::VariantOp entry;
    entry.name = op.getName().getStringRef().str();
    if (!name(op.getResult(0), entry.type))
      return false;
    for (Value operand : op.getOperands())
      entry.operands.push_back(numbers.at(operand));
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      if (auto f = dyn_cast<FloatAttr>(constant.getValue()))
        entry.value = ::fa::exactDouble(f.getValueAsDouble());
      else
        entry.value = std::to_string(
            cast<IntegerAttr>(constant.getValue()).getValue().getSExtValue());
    }
    if (auto cmp = dyn_cast<arith::CmpFOp>(op))
      entry.predicate = arith::stringifyCmpFPredicate(cmp.getPredicate()).str();
    if (auto cmp = dyn_cast<arith::CmpIOp>(op))
      entry.predicate = arith::stringifyCmpIPredicate(cmp.getPredicate()).str();
    if (std::string reason =
            ::fa::unsupportedVariantOp(entry.name, entry.operands.size());
        !reason.empty()) {
      error = reason;
      return false;
    }
    numbers[op.getResult(0)] =
        static_cast<int32_t>(program.arguments.size() + program.ops.size());
    program.ops.push_back(std::move(entry));
  }
  program.result =
      numbers.at(cast<mlir::fa::YieldOp>(body.getTerminator()).getValue());
  return true;
}
} // namespace

bool mlir::fa::variantOf(Operation *attention, ::fa::Variant &variant,
                         std::string &error) {
  Region *scoreMod, *maskMod;
  ValueRange captures;
  if (auto fwd = dyn_cast<AttentionOp>(attention)) {
    scoreMod = &fwd.getScoreMod();
    maskMod = &fwd.getMaskMod();
    captures = fwd.getCaptures();
  } else {
    auto bwd = cast<AttentionGradOp>(attention);
    scoreMod = &bwd.getScoreMod();
    maskMod = &bwd.getMaskMod();
    captures = bwd.getCaptures();
  }
  variant.captures = captureTypesOf(captures.getTypes());
  for (const ::fa::CaptureType &type : variant.captures)
    if (type.element.empty()) {
      error = "the runtime takes captured values of f16, bf16, f32, i1, i8, "
              "i16, i32, i64 or index elements";
      return false;
    }
  return programOf(*scoreMod, variant.scoreMod, error) &&
         programOf(*maskMod, variant.maskMod, error);
}
