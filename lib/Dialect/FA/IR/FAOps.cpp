//===- FAOps.cpp - fa dialect operations ----------------------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/IR/FAOps.h"
#include "fa/Dialect/FA/IR/ModRegions.h"
#include "fa/runtime/Limits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <string>
#include <tuple>

using namespace mlir;
using namespace mlir::fa;

//===----------------------------------------------------------------------===//
// Shared verification
//===----------------------------------------------------------------------===//

namespace {
/// Logical dimension positions, as docs/design.md names them.
enum Dim4 : unsigned { kBatch = 0, kHeads = 1, kSeq = 2, kHead = 3 };

/// One 4-D attention operand or result, with the names used in diagnostics.
struct NamedTensor {
  StringRef name;
  RankedTensorType type;
};

/// The logical sizes of an attention problem, read off Q, K and V.
struct AttentionSizes {
  int64_t batch, queryHeads, kvHeads, queryLen, keyLen, headDim, valueDim;
};
} // namespace

static bool isSupportedInputElementType(Type type) {
  return isa<Float16Type, BFloat16Type, Float8E4M3FNType>(type);
}

static void printDim(InFlightDiagnostic &diag, int64_t size) {
  if (ShapedType::isDynamic(size))
    diag << "?";
  else
    diag << size;
}

/// Emits "<dim> of <name> (<x>) does not match <dim> of <refName> (<y>)" when
/// two static sizes differ. Dynamic sizes are checked at run time instead.
static LogicalResult checkSameDim(Operation *op, StringRef dimName,
                                  StringRef name, int64_t size,
                                  StringRef refName, int64_t refSize) {
  if (ShapedType::isDynamic(size) || ShapedType::isDynamic(refSize) ||
      size == refSize)
    return success();
  InFlightDiagnostic diag = op->emitOpError();
  diag << dimName << " of " << name << " (";
  printDim(diag, size);
  diag << ") does not match " << dimName << " of " << refName << " (";
  printDim(diag, refSize);
  diag << ")";
  return diag;
}

/// The names of the dimensions of a tensor laid out as `layout` ("[B, Hq, M,
/// D]" gives B, Hq, M, D).
static SmallVector<StringRef> dimNames(StringRef layout) {
  SmallVector<StringRef> names;
  layout.trim("[]").split(names, ", ");
  return names;
}

/// Checks the static sizes of `type` against fa::limits: every dimension at
/// least 1, a sequence dimension (`seqDim`, or -1 for none) at most
/// kMaxSequence, and at most kMaxTensorElements elements. Dynamic sizes are
/// checked at run time by the runtime, against the same limits.
static LogicalResult checkSizeRanges(Operation *op, StringRef name,
                                     RankedTensorType type, StringRef layout,
                                     int64_t seqDim) {
  SmallVector<StringRef> names = dimNames(layout);
  for (auto [dim, size] : llvm::enumerate(type.getShape())) {
    if (ShapedType::isDynamic(size))
      continue;
    StringRef dimName = dim < names.size() ? names[dim] : StringRef("size");
    if (size < 1)
      return op->emitOpError() << dimName << " of " << name
                               << " must be >= 1, but is " << size;
    if (static_cast<int64_t>(dim) == seqDim && size > ::fa::limits::kMaxSequence)
      return op->emitOpError()
             << dimName << " of " << name << " (" << size
             << ") exceeds the longest accepted sequence, 2^40 = "
             << ::fa::limits::kMaxSequence;
  }
  if (!type.hasStaticShape())
    return success();
  int64_t product = 1;
  for (int64_t size : type.getShape())
    if (product != -1)
      product = ::fa::limits::checkedElements({product, size});
  if (product == -1)
    return op->emitOpError()
           << name << " (" << llvm::join(llvm::map_range(type.getShape(),
                                                         [](int64_t size) {
                                                           return std::to_string(
                                                               size);
                                                         }),
                                         "x")
           << ") has more elements than the limit, 2^45 = "
           << ::fa::limits::kMaxTensorElements;
  return success();
}

/// Checks that `value` is a ranked tensor of the given rank.
static FailureOr<RankedTensorType> getRankedOperand(Operation *op, Value value,
                                                    StringRef name,
                                                    int64_t rank,
                                                    StringRef layout) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() != rank) {
    op->emitOpError() << name << " must have rank " << rank << " " << layout
                      << ", but has rank " << type.getRank();
    return failure();
  }
  // Rank 1 or 2 tensors (ALiBi slopes) have no sequence dimension.
  if (failed(checkSizeRanges(op, name, type, layout, rank >= 3 ? 2 : -1)))
    return failure();
  return type;
}

/// Verifies Q, K and V against each other and returns the problem sizes.
static FailureOr<AttentionSizes>
verifyAttentionInputs(Operation *op, Value query, Value key, Value value) {
  FailureOr<RankedTensorType> q =
      getRankedOperand(op, query, "query", 4, "[B, Hq, M, D]");
  if (failed(q))
    return failure();
  FailureOr<RankedTensorType> k =
      getRankedOperand(op, key, "key", 4, "[B, Hkv, N, D]");
  if (failed(k))
    return failure();
  FailureOr<RankedTensorType> v =
      getRankedOperand(op, value, "value", 4, "[B, Hkv, N, Dv]");
  if (failed(v))
    return failure();

  Type elementType = q->getElementType();
  if (!isSupportedInputElementType(elementType))
    return op->emitOpError()
           << "element type of query (" << elementType
           << ") is not supported; expected f16, bf16 or f8E4M3FN";
  for (NamedTensor operand : {NamedTensor{"key", *k}, NamedTensor{"value", *v}})
    if (operand.type.getElementType() != elementType)
      return op->emitOpError()
             << "element type of " << operand.name << " ("
             << operand.type.getElementType()
             << ") does not match element type of query (" << elementType
             << ")";

  AttentionSizes sizes{q->getDimSize(kBatch), q->getDimSize(kHeads),
                       k->getDimSize(kHeads), q->getDimSize(kSeq),
                       k->getDimSize(kSeq),   q->getDimSize(kHead),
                       v->getDimSize(kHead)};
  if (failed(checkSameDim(op, "B", "key", k->getDimSize(kBatch), "query",
                          sizes.batch)) ||
      failed(checkSameDim(op, "B", "value", v->getDimSize(kBatch), "query",
                          sizes.batch)) ||
      failed(checkSameDim(op, "Hkv", "value", v->getDimSize(kHeads), "key",
                          sizes.kvHeads)) ||
      failed(checkSameDim(op, "D", "key", k->getDimSize(kHead), "query",
                          sizes.headDim)) ||
      failed(checkSameDim(op, "N", "value", v->getDimSize(kSeq), "key",
                          sizes.keyLen)))
    return failure();

  // GQA/MQA: query head h reads key/value head h / (Hq / Hkv).
  if (!ShapedType::isDynamic(sizes.queryHeads) &&
      !ShapedType::isDynamic(sizes.kvHeads)) {
    if (sizes.kvHeads <= 0 || sizes.queryHeads % sizes.kvHeads != 0)
      return op->emitOpError()
             << "Hq of query (" << sizes.queryHeads
             << ") is not a multiple of Hkv of key (" << sizes.kvHeads << ")";
  }
  return sizes;
}

/// Emits "<dim> of <name> is dynamic, but <dim> of <refName> is static
/// (<y>)..." when a result leaves open a size its operands fix: the passes
/// build a result of the operands' sizes, which must be its declared type.
static LogicalResult checkResultDim(Operation *op, StringRef dimName,
                                    StringRef name, int64_t size,
                                    StringRef refName, int64_t refSize) {
  if (!ShapedType::isDynamic(size) || ShapedType::isDynamic(refSize))
    return checkSameDim(op, dimName, name, size, refName, refSize);
  return op->emitOpError()
         << dimName << " of " << name << " is dynamic, but " << dimName
         << " of " << refName << " is static (" << refSize
         << "): a result's size must be static wherever the operands give it";
}

/// Verifies a [B, Hq, M, Dv] tensor: the output (a result of fa.attention,
/// `isResult`), or O and dO on the backward op.
static LogicalResult verifyOutputLike(Operation *op, Value output,
                                      StringRef name, Type expectedElementType,
                                      StringRef elementTypeReason,
                                      const AttentionSizes &sizes,
                                      bool isResult = false) {
  FailureOr<RankedTensorType> o =
      getRankedOperand(op, output, name, 4, "[B, Hq, M, Dv]");
  if (failed(o))
    return failure();
  if (o->getElementType() != expectedElementType)
    return op->emitOpError()
           << "element type of " << name << " (" << o->getElementType()
           << ") must be " << expectedElementType << " ("
           << elementTypeReason << ")";
  auto check = isResult ? checkResultDim : checkSameDim;
  if (failed(check(op, "B", name, o->getDimSize(kBatch), "query",
                   sizes.batch)) ||
      failed(check(op, "Hq", name, o->getDimSize(kHeads), "query",
                   sizes.queryHeads)) ||
      failed(check(op, "M", name, o->getDimSize(kSeq), "query",
                   sizes.queryLen)) ||
      failed(check(op, "Dv", name, o->getDimSize(kHead), "value",
                   sizes.valueDim)))
    return failure();
  return success();
}

/// Verifies the [B, Hq, M] f32 log-sum-exp (a result of fa.attention,
/// `isResult`, or the backward's operand).
static LogicalResult verifyLse(Operation *op, Value lse,
                               const AttentionSizes &sizes,
                               bool isResult = false) {
  FailureOr<RankedTensorType> type =
      getRankedOperand(op, lse, "lse", 3, "[B, Hq, M]");
  if (failed(type))
    return failure();
  if (!type->getElementType().isF32())
    return op->emitOpError() << "element type of lse ("
                             << type->getElementType() << ") must be f32";
  auto check = isResult ? checkResultDim : checkSameDim;
  if (failed(check(op, "B", "lse", type->getDimSize(kBatch), "query",
                   sizes.batch)) ||
      failed(check(op, "Hq", "lse", type->getDimSize(kHeads), "query",
                   sizes.queryHeads)) ||
      failed(check(op, "M", "lse", type->getDimSize(kSeq), "query",
                   sizes.queryLen)))
    return failure();
  return success();
}

/// Verifies the optional ALiBi slopes: f32, [Hq] (one slope per query head,
/// shared by every batch) or [B, Hq].
static LogicalResult verifyAlibiSlopes(Operation *op, Value slopes,
                                       const AttentionSizes &sizes) {
  if (!slopes)
    return success();
  auto type = cast<RankedTensorType>(slopes.getType());
  if (type.getRank() != 1 && type.getRank() != 2)
    return op->emitOpError()
           << "alibi_slopes must have rank 1 [Hq] or 2 [B, Hq], but has rank "
           << type.getRank();
  if (!type.getElementType().isF32())
    return op->emitOpError() << "element type of alibi_slopes ("
                             << type.getElementType() << ") must be f32";
  if (failed(checkSizeRanges(op, "alibi_slopes", type,
                             type.getRank() == 1 ? "[Hq]" : "[B, Hq]", -1)))
    return failure();
  if (type.getRank() == 2 &&
      failed(checkSameDim(op, "B", "alibi_slopes", type.getDimSize(0), "query",
                          sizes.batch)))
    return failure();
  return checkSameDim(op, "Hq", "alibi_slopes",
                      type.getDimSize(type.getRank() - 1), "query",
                      sizes.queryHeads);
}

/// Descales: three f32 scalars, or three f32 tensors [B, Hkv].
static LogicalResult verifyDescales(Operation *op, ValueRange descales,
                                    const AttentionSizes &sizes) {
  if (descales.empty())
    return success();
  bool perHead = isa<RankedTensorType>(descales.front().getType());
  static constexpr const char *kNames[] = {"query", "key", "value"};
  for (auto [i, descale] : llvm::enumerate(descales)) {
    auto type = dyn_cast<RankedTensorType>(descale.getType());
    if (bool(type) != perHead)
      return op->emitOpError()
             << "descale factors must be all f32 scalars (per tensor) or all "
                "[B, Hkv] tensors (per head), but the "
             << kNames[i] << "'s is " << descale.getType();
    if (!type)
      continue;
    if (type.getRank() != 2)
      return op->emitOpError() << "the " << kNames[i]
                               << "'s descale must be [B, Hkv], but has rank "
                               << type.getRank();
    if (failed(checkSameDim(op, "B", "descale", type.getDimSize(0), "query",
                            sizes.batch)) ||
        failed(checkSameDim(op, "Hkv", "descale", type.getDimSize(1), "key",
                            sizes.kvHeads)))
      return failure();
  }
  return success();
}

/// `value` as a diagnostic shows it: shortest %g form, nan, inf or -inf.
static std::string formatValue(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

/// Verifies scale and softcap against fa::limits (docs/dialect.md, "Ranges",
/// says why the bounds are where they are). The mask and tile attributes
/// verify themselves.
static LogicalResult verifyAttentionOptions(Operation *op, FloatAttr scale,
                                            FloatAttr softcap, TileAttr tile,
                                            BlockSparseAttr blockSparse) {
  // fa-tile caps the tile at the block mask's blocks; a smaller tile must
  // divide them.
  if (tile && blockSparse)
    for (auto [name, size, block] :
         {std::tuple<const char *, int64_t, int64_t>{"block_m", tile.getBlockM(),
                                                     blockSparse.getQBlock()},
          {"block_n", tile.getBlockN(), blockSparse.getKvBlock()}})
      if (size < block && block % size)
        return op->emitOpError()
               << "tile " << name << " = " << size
               << " does not divide the block mask's block of " << block;
  if (scale && !::fa::limits::scaleInRange(scale.getValueAsDouble()))
    return op->emitOpError()
           << "scale must be finite with |scale| in ["
           << formatValue(::fa::limits::kMinAbsScale) << ", "
           << formatValue(::fa::limits::kMaxAbsScale) << "], but is "
           << formatValue(scale.getValueAsDouble());
  if (softcap && !::fa::limits::softcapInRange(softcap.getValueAsDouble()))
    return op->emitOpError()
           << "softcap must be 0 (off) or in ["
           << formatValue(::fa::limits::kMinSoftcap) << ", "
           << formatValue(::fa::limits::kMaxSoftcap) << "], but is "
           << formatValue(softcap.getValueAsDouble());
  return success();
}

/// The captured operands and both optional variant regions.
static LogicalResult verifyVariantRegions(Operation *op, ValueRange captures,
                                         Region &scoreMod, Region &maskMod) {
  if (failed(verifyCaptures(op, captures)) ||
      failed(verifyModRegion(op, scoreMod, ModKind::Score,
                             captures.getTypes(), /*optional=*/true)) ||
      failed(verifyModRegion(op, maskMod, ModKind::Mask, captures.getTypes(),
                             /*optional=*/true)))
    return failure();
  if (!captures.empty() && scoreMod.empty() && maskMod.empty())
    return op->emitOpError()
           << "has captured operands but no score_mod or mask_mod to read them";
  return success();
}

/// The element type of O for inputs of `inputType`: the input type itself,
/// except for f8E4M3FN, whose output is bf16.
static Type getOutputElementType(Type inputType) {
  if (isa<Float8E4M3FNType>(inputType))
    return BFloat16Type::get(inputType.getContext());
  return inputType;
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  FailureOr<AttentionSizes> sizes =
      verifyAttentionInputs(*this, getQuery(), getKey(), getValue());
  if (failed(sizes))
    return failure();

  Type inputType = getQuery().getType().getElementType();
  bool isFp8 = isa<Float8E4M3FNType>(inputType);
  // FP8 values are stored scaled; one descale factor per tensor undoes that.
  if (isFp8 && getDescale().size() != 3)
    return emitOpError() << "f8E4M3FN inputs need 3 descale factors (query, "
                            "key, value), but got "
                         << getDescale().size();
  if (!isFp8 && !getDescale().empty())
    return emitOpError() << "descale factors are only for f8E4M3FN inputs, "
                            "but the inputs are "
                         << inputType;
  if (failed(verifyDescales(*this, getDescale(), *sizes)))
    return failure();

  if (failed(verifyOutputLike(*this, getOutput(), "output",
                              getOutputElementType(inputType),
                              isFp8 ? "as f8E4M3FN inputs give"
                                    : "the input element type",
                              *sizes, /*isResult=*/true)))
    return failure();
  if (getLse() && failed(verifyLse(*this, getLse(), *sizes, /*isResult=*/true)))
    return failure();
  if (failed(verifyAlibiSlopes(*this, getAlibiSlopes(), *sizes)))
    return failure();
  return verifyAttentionOptions(*this, getScaleAttr(), getSoftcapAttr(),
                                getTileAttr(), getBlockSparseAttr());
}

LogicalResult AttentionOp::verifyRegions() {
  return verifyVariantRegions(*this, getCaptures(), getScoreMod(),
                              getMaskMod());
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionGradOp::verify() {
  FailureOr<AttentionSizes> sizes =
      verifyAttentionInputs(*this, getQuery(), getKey(), getValue());
  if (failed(sizes))
    return failure();

  Type inputType = getQuery().getType().getElementType();
  if (isa<Float8E4M3FNType>(inputType))
    return emitOpError() << "has no f8E4M3FN backward; inputs must be f16 or "
                            "bf16";

  if (failed(verifyOutputLike(*this, getOutput(), "output", inputType,
                              "the input element type", *sizes)) ||
      failed(verifyOutputLike(*this, getGradOutput(), "grad_output",
                              inputType, "the input element type", *sizes)) ||
      failed(verifyLse(*this, getLse(), *sizes)) ||
      failed(verifyAlibiSlopes(*this, getAlibiSlopes(), *sizes)))
    return failure();

  // Each gradient has exactly the type of the input it differentiates.
  struct GradPair {
    StringRef gradName;
    Value grad;
    StringRef inputName;
    Value input;
  };
  for (const GradPair &pair :
       {GradPair{"grad_query", getGradQuery(), "query", getQuery()},
        GradPair{"grad_key", getGradKey(), "key", getKey()},
        GradPair{"grad_value", getGradValue(), "value", getValue()}})
    if (pair.grad.getType() != pair.input.getType())
      return emitOpError() << "type of " << pair.gradName << " ("
                           << pair.grad.getType() << ") does not match type of "
                           << pair.inputName << " (" << pair.input.getType()
                           << ")";
  if (failed(verifyAttentionOptions(*this, getScaleAttr(), getSoftcapAttr(),
                                    getTileAttr(), getBlockSparseAttr())))
    return failure();
  if (FloatAttr scale = getScaleAttr();
      scale && !::fa::limits::backwardScaleInRange(scale.getValueAsDouble()))
    return emitOpError()
           << "scale must have |scale| <= "
           << formatValue(::fa::limits::kMaxAbsBackwardScale)
           << " for the backward (P is recomputed from the f32 LSE), but is "
           << formatValue(scale.getValueAsDouble());
  return success();
}

LogicalResult AttentionGradOp::verifyRegions() {
  return verifyVariantRegions(*this, getCaptures(), getScoreMod(),
                              getMaskMod());
}

/// `-> type` after an op whose result type is its input's unless printed
/// (fa.exp_shifted: a GPU layout may differ between the two).
static ParseResult parseResultTypeIfDistinct(OpAsmParser &parser,
                                             Type inputType, Type &resultType) {
  resultType = inputType;
  if (succeeded(parser.parseOptionalArrow()))
    return parser.parseType(resultType);
  return success();
}

static void printResultTypeIfDistinct(OpAsmPrinter &printer, Operation *,
                                      Type inputType, Type resultType) {
  if (resultType != inputType)
    printer << "-> " << resultType;
}

/// fa.wgmma's A: `desc %descriptor + offset` or the four registers.
static ParseResult
parseWgmmaOperandA(OpAsmParser &parser,
                   std::optional<OpAsmParser::UnresolvedOperand> &descriptor,
                   IntegerAttr &offset,
                   SmallVectorImpl<OpAsmParser::UnresolvedOperand> &registers) {
  if (succeeded(parser.parseOptionalKeyword("desc"))) {
    OpAsmParser::UnresolvedOperand operand;
    int64_t bytes = 0;
    if (parser.parseOperand(operand) || parser.parsePlus() ||
        parser.parseInteger(bytes))
      return failure();
    descriptor = operand;
    offset = parser.getBuilder().getI64IntegerAttr(bytes);
    return success();
  }
  return parser.parseOperandList(registers);
}

static void printWgmmaOperandA(OpAsmPrinter &printer, Operation *,
                               Value descriptor, IntegerAttr offset,
                               OperandRange registers) {
  if (descriptor) {
    printer << "desc " << descriptor << " + " << (offset ? offset.getInt() : 0);
    return;
  }
  printer << registers;
}

#define GET_OP_CLASSES
#include "fa/Dialect/FA/IR/FAOps.cpp.inc"
