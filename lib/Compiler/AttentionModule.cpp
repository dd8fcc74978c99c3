//===- AttentionModule.cpp - from a spec to an fa module ------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Compiler/AttentionModule.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <sstream>
#include <utility>

using namespace mlir;

namespace {

/// "tensor<2x8x113x64xbf16>" / "memref<...>"
std::string shapedType(const char *kind, std::initializer_list<int64_t> shape,
                       const std::string &element) {
  std::ostringstream os;
  os << kind << "<";
  for (int64_t dim : shape)
    os << dim << "x";
  os << element << ">";
  return os.str();
}

const char *mlirElementType(::fa::ElementType type) {
  switch (type) {
  case ::fa::ElementType::F16:
    return "f16";
  case ::fa::ElementType::BF16:
    return "bf16";
  case ::fa::ElementType::F8E4M3FN:
    return "f8E4M3FN";
  case ::fa::ElementType::F32:
    return "f32";
  }
  return "f32";
}

/// One operand of an entry point: memref argument, tensor view of it.
struct Operand {
  std::string name, memref, tensor;
};

class ModuleWriter {
public:
  explicit ModuleWriter(const ::fa::AttentionSpec &spec) : spec(spec) {}

  Operand operand(const std::string &name,
                  std::initializer_list<int64_t> shape,
                  const std::string &element) {
    return {name, shapedType("memref", shape, element),
            shapedType("tensor", shape, element)};
  }

  std::string attributes() const {
    std::ostringstream os;
    os.precision(9);
    os << "{mask = #fa.mask<" << ::fa::maskName(spec.mask) << ">";
    os << ", scale = " << std::scientific << spec.scaleOrDefault() << " : f32";
    if (spec.softcap > 0)
      os << ", softcap = " << spec.softcap << " : f32";
    os << ", tile = #fa.tile<block_m = " << spec.blockM
       << ", block_n = " << spec.blockN << ", stages = 2, warps = 4>}";
    return os.str();
  }

  /// func.func @name(inputs..., [descales,] [slopes,] outputs...) {
  /// to_tensor; <op>; materialize }. The descales, when given (a
  /// memref<3xf32>: Q's, K's, V's), are the op's `descale(...)` after its
  /// first three operands; the slopes its `alibi(...)`.
  void entryPoint(std::ostream &os, const std::string &name,
                  std::vector<Operand> inputs,
                  const std::vector<Operand> &outputs, const std::string &op,
                  const std::optional<Operand> &alibiSlopes,
                  const std::optional<Operand> &descales = std::nullopt) {
    size_t numOperands = inputs.size();
    if (descales)
      inputs.push_back(*descales);
    if (alibiSlopes)
      inputs.push_back(*alibiSlopes);
    os << "  func.func @" << name << "(";
    bool first = true;
    for (const std::vector<Operand> *group : {&std::as_const(inputs), &outputs})
      for (const Operand &o : *group) {
        os << (first ? "" : ", ") << "%" << o.name << "_buf: " << o.memref;
        first = false;
      }
    os << ") attributes {llvm.emit_c_interface} {\n";
    for (const Operand &o : inputs)
      if (!descales || o.name != descales->name)
        os << "    %" << o.name << " = bufferization.to_tensor %" << o.name
           << "_buf restrict : " << o.memref << " to " << o.tensor << "\n";
    static constexpr const char *kDescaled[] = {"q", "k", "v"};
    if (descales && perHeadDescales) {
      // [3, B, Hkv]: one [B, Hkv] slice per tensor.
      os << "    %" << descales->name << " = bufferization.to_tensor %"
         << descales->name << "_buf restrict : " << descales->memref << " to "
         << descales->tensor << "\n";
      for (size_t i = 0; i < 3; ++i)
        os << "    %descale_" << kDescaled[i] << " = tensor.extract_slice %"
           << descales->name << "[" << i << ", 0, 0] [1, " << perHeadDescales->first
           << ", " << perHeadDescales->second << "] [1, 1, 1] : " << descales->tensor
           << " to " << descaleType() << "\n";
    } else if (descales) {
      for (size_t i = 0; i < 3; ++i)
        os << "    %c" << i << "_descale = arith.constant " << i << " : index\n";
      for (size_t i = 0; i < 3; ++i)
        os << "    %descale_" << kDescaled[i] << " = memref.load %"
           << descales->name << "_buf[%c" << i << "_descale] : "
           << descales->memref << "\n";
    }
    os << "    ";
    for (size_t i = 0; i < outputs.size(); ++i)
      os << (i ? ", " : "") << "%" << outputs[i].name;
    os << " = " << op << " ";
    for (size_t i = 0; i < numOperands; ++i)
      os << (i ? ", " : "") << "%" << inputs[i].name;
    if (descales)
      os << " descale(%descale_q, %descale_k, %descale_v)";
    if (alibiSlopes)
      os << " alibi(%" << alibiSlopes->name << ")";
    os << " " << attributes() << "\n        : (";
    for (size_t i = 0; i < inputs.size(); ++i)
      os << (i ? ", " : "")
         << (descales && inputs[i].name == descales->name
                 ? descaleType() + ", " + descaleType() + ", " + descaleType()
                 : inputs[i].tensor);
    os << ") -> (";
    for (size_t i = 0; i < outputs.size(); ++i)
      os << (i ? ", " : "") << outputs[i].tensor;
    os << ")\n";
    for (const Operand &o : outputs)
      os << "    bufferization.materialize_in_destination %" << o.name
         << " in restrict writable %" << o.name << "_buf : (" << o.tensor
         << ", " << o.memref << ") -> ()\n";
    os << "    return\n  }\n";
  }

  /// Set for per-head descales: (B, Hkv), the [3, B, Hkv] operand's
  /// slices' shape.
  std::optional<std::pair<int64_t, int64_t>> perHeadDescales;

private:
  std::string descaleType() const {
    if (!perHeadDescales)
      return "f32";
    return "tensor<" + std::to_string(perHeadDescales->first) + "x" +
           std::to_string(perHeadDescales->second) + "xf32>";
  }
  const ::fa::AttentionSpec &spec;
};

} // namespace

std::string mlir::fa::buildAttentionModuleText(const ::fa::AttentionSpec &spec,
                                               const ::fa::ProblemSize &size,
                                               bool withBackward) {
  ModuleWriter writer(spec);
  std::string in = mlirElementType(spec.dtype);
  std::string out =
      spec.dtype == ::fa::ElementType::F8E4M3FN ? "bf16" : in;
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, D = spec.headDim,
          Dv = spec.valueDim;
  Operand q = writer.operand("q", {B, Hq, M, D}, in);
  Operand k = writer.operand("k", {B, Hkv, N, D}, in);
  Operand v = writer.operand("v", {B, Hkv, N, Dv}, in);
  Operand o = writer.operand("o", {B, Hq, M, Dv}, out);
  Operand lse = writer.operand("lse", {B, Hq, M}, "f32");
  std::optional<Operand> slopes;
  switch (spec.alibi) {
  case ::fa::AlibiKind::None:
    break;
  case ::fa::AlibiKind::Head:
    slopes = writer.operand("slopes", {Hq}, "f32");
    break;
  case ::fa::AlibiKind::BatchHead:
    slopes = writer.operand("slopes", {B, Hq}, "f32");
    break;
  }

  std::ostringstream os;
  os << "// fa-mlir: d=" << D << " dv=" << Dv << " dtype=" << in
     << " mask=" << ::fa::maskName(spec.mask) << " B=" << B << " Hq=" << Hq
     << " Hkv=" << Hkv << " M=" << M << " N=" << N;
  if (slopes)
    os << " alibi=" << ::fa::alibiName(spec.alibi);
  os << "\n";
  // f8E4M3FN: Q, K and V are stored values, each with an f32 descale.
  std::optional<Operand> descales;
  if (spec.dtype == ::fa::ElementType::F8E4M3FN &&
      spec.descale == ::fa::DescaleKind::Head) {
    descales = writer.operand("descale", {3, B, Hkv}, "f32");
    writer.perHeadDescales = std::make_pair(B, Hkv);
  } else if (spec.dtype == ::fa::ElementType::F8E4M3FN) {
    descales = writer.operand("descale", {3}, "f32");
  }
  os << "module {\n";
  writer.entryPoint(os, "fa_forward", {q, k, v}, {o, lse}, "fa.attention",
                    slopes, descales);
  if (withBackward) {
    Operand gradOut = writer.operand("do", {B, Hq, M, Dv}, out);
    Operand dq = writer.operand("dq", {B, Hq, M, D}, in);
    Operand dk = writer.operand("dk", {B, Hkv, N, D}, in);
    Operand dv = writer.operand("dv", {B, Hkv, N, Dv}, in);
    writer.entryPoint(os, "fa_backward", {q, k, v, o, gradOut, lse},
                      {dq, dk, dv}, "fa.attention_grad", slopes);
  }
  os << "}\n";
  return os.str();
}

std::string mlir::fa::buildForwardEntryText(const ::fa::AttentionSpec &spec,
                                            const ::fa::ProblemSize &size,
                                            const std::string &callee) {
  ModuleWriter writer(spec);
  std::string in = mlirElementType(spec.dtype);
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen;
  Operand q = writer.operand("q", {B, Hq, M, spec.headDim}, in);
  Operand k = writer.operand("k", {B, Hkv, N, spec.headDim}, in);
  Operand v = writer.operand("v", {B, Hkv, N, spec.valueDim}, in);
  Operand o = writer.operand("o", {B, Hq, M, spec.valueDim}, in);
  Operand lse = writer.operand("lse", {B, Hq, M}, "f32");
  std::ostringstream os;
  os << "module {\n  func.func @fa_forward(";
  const Operand *all[] = {&q, &k, &v, &o, &lse};
  for (size_t i = 0; i < 5; ++i)
    os << (i ? ", " : "") << "%" << all[i]->name << "_buf: " << all[i]->memref;
  os << ") attributes {llvm.emit_c_interface} {\n";
  for (const Operand *x : {&q, &k, &v})
    os << "    %" << x->name << " = bufferization.to_tensor %" << x->name
       << "_buf restrict : " << x->memref << " to " << x->tensor << "\n";
  os << "    %o = func.call @" << callee << "(%q, %k, %v) : (" << q.tensor << ", "
     << k.tensor << ", " << v.tensor << ") -> " << o.tensor << "\n";
  os << "    bufferization.materialize_in_destination %o in restrict writable "
        "%o_buf : ("
     << o.tensor << ", " << o.memref << ") -> ()\n    return\n  }\n}\n";
  return os.str();
}

OwningOpRef<ModuleOp>
mlir::fa::buildAttentionModule(MLIRContext &context,
                               const ::fa::AttentionSpec &spec,
                               const ::fa::ProblemSize &size,
                               bool withBackward, std::string &error) {
  std::string text = buildAttentionModuleText(spec, size, withBackward);
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      os << diag.str();
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module)
    error = diagnostics.empty() ? "could not build the module" : diagnostics;
  return module;
}
