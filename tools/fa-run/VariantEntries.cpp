//===- VariantEntries.cpp - fa-run's entries around a variant's op --------===//
//
// Part of fa-mlir.
//
// An --input whose fa.attention has score_mod / mask_mod regions is run
// through entries built around a copy of that op, so that the run has the
// forward's LSE and a backward: fa.attention_grad with the same regions,
// captures and attributes (what a framework's autograd would emit).
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"

#include "fa/Dialect/FA/IR/FAOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace {

/// Builds `func.func @name(args...) attributes {llvm.emit_c_interface}`
/// whose tensor arguments arrive as memrefs; `body` gets the tensor views
/// (and scalars as they are) and returns the results to store into the
/// trailing `results` buffers.
void buildEntry(OpBuilder &b, Location loc, StringRef name,
                ArrayRef<Type> inputs, ArrayRef<Type> results,
                function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> body) {
  auto asMemref = [](Type type) -> Type {
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      return MemRefType::get(tensor.getShape(), tensor.getElementType());
    return type;
  };
  SmallVector<Type> argTypes;
  for (Type type : inputs)
    argTypes.push_back(asMemref(type));
  for (Type type : results)
    argTypes.push_back(asMemref(type));
  auto func = func::FuncOp::create(b, loc, name,
                                   b.getFunctionType(argTypes, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *entry = func.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  SmallVector<Value> views;
  for (auto [type, arg] : llvm::zip(inputs, entry->getArguments())) {
    if (!isa<RankedTensorType>(type)) {
      views.push_back(arg);
      continue;
    }
    views.push_back(bufferization::ToTensorOp::create(
        b, loc, type, arg, /*restrict=*/true, /*writable=*/false));
  }
  SmallVector<Value> values = body(b, views);
  for (auto [value, buffer] :
       llvm::zip(values, entry->getArguments().drop_front(inputs.size()))) {
    auto store = bufferization::MaterializeInDestinationOp::create(
        b, loc, value, buffer);
    store.setRestrict(true);
    store.setWritable(true);
  }
  func::ReturnOp::create(b, loc);
}

/// Copies `from`'s variant regions into `to`'s.
template <typename OpT>
void copyRegions(::mlir::fa::AttentionOp from, OpT to) {
  IRMapping mapping;
  from.getScoreMod().cloneInto(&to.getScoreMod(), mapping);
  from.getMaskMod().cloneInto(&to.getMaskMod(), mapping);
}

} // namespace

bool ::fa::buildVariantEntries(ModuleOp module, ::mlir::fa::AttentionOp attention,
                             bool withBackward) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  Location loc = attention.getLoc();
  Type q = attention.getQuery().getType(), k = attention.getKey().getType(),
       v = attention.getValue().getType(), o = attention.getOutput().getType();
  auto oType = cast<RankedTensorType>(o);
  Type lse = RankedTensorType::get(oType.getShape().drop_back(),
                                   b.getF32Type());
  SmallVector<Type> captures(attention.getCaptures().getTypes());
  auto withCaptures = [&](SmallVector<Type> fixed) {
    fixed.append(captures.begin(), captures.end());
    return fixed;
  };
  // fa_forward(q, k, v, captures..., o, lse)
  buildEntry(b, loc, "fa_forward", withCaptures({q, k, v}), {o, lse},
             [&](OpBuilder &nb, ValueRange in) -> SmallVector<Value> {
    auto op = ::mlir::fa::AttentionOp::create(
        nb, loc, TypeRange{o, lse}, in[0], in[1], in[2], ValueRange{},
        Value(), in.drop_front(3), attention.getMaskAttr(),
        attention.getScaleAttr(), attention.getSoftcapAttr(),
        attention.getTileAttr(), attention.getBlockSparseAttr());
    copyRegions(attention, op);
    return {op.getOutput(), op.getLse()};
  });
  if (!withBackward)
    return true;
  // fa_backward(q, k, v, o, do, lse, captures..., dq, dk, dv)
  buildEntry(b, loc, "fa_backward", withCaptures({q, k, v, o, o, lse}),
             {q, k, v}, [&](OpBuilder &nb, ValueRange in) -> SmallVector<Value> {
    auto op = ::mlir::fa::AttentionGradOp::create(
        nb, loc, TypeRange{q, k, v}, in[0], in[1], in[2], in[3], in[4], in[5],
        Value(), in.drop_front(6), attention.getMaskAttr(),
        attention.getScaleAttr(), attention.getSoftcapAttr(),
        attention.getTileAttr(), attention.getBlockSparseAttr());
    copyRegions(attention, op);
    return {op.getGradQuery(), op.getGradKey(), op.getGradValue()};
  });
  return true;
}
