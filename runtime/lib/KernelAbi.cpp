//===- KernelAbi.cpp - the forward kernel's parameters, once --------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/KernelAbi.h"

#include "fa/runtime/Numerics.h"

#include <cstring>
#include <functional>

using namespace fa;
using namespace fa::abi;

namespace {
/// One row of the ABI: the parameter and where its value comes from.
struct Binding {
  Param param;
  std::function<int64_t(const ForwardArgs &)> value;
};
} // namespace

static const std::vector<Binding> &forwardBindings() {
  using P = ParamType;
  using U = ParamUse;
  auto ptr = [](cuda::CUdeviceptr ForwardArgs::*field) {
    return [field](const ForwardArgs &a) {
      return static_cast<int64_t>(a.*field);
    };
  };
  auto i64 = [](int64_t ForwardArgs::*field) {
    return [field](const ForwardArgs &a) { return a.*field; };
  };
  auto stride = [](int64_t (ForwardArgs::*field)[3], int dim) {
    return [field, dim](const ForwardArgs &a) { return (a.*field)[dim]; };
  };
  auto none = [](const ForwardArgs &) { return int64_t(0); };
  static const std::vector<Binding> table = {
      {{"q_tmap", P::TensorMap, U::TensorMaps}, none},
      {{"k_tmap", P::TensorMap, U::TensorMaps}, none},
      {{"v_tmap", P::TensorMap, U::TensorMaps}, none},
      {{"o_tmap", P::TensorMap, U::OutputTensorMap}, none},
      {{"q", P::ElementBuffer, U::Always}, ptr(&ForwardArgs::q)},
      {{"k", P::ElementBuffer, U::Always}, ptr(&ForwardArgs::k)},
      {{"v", P::ElementBuffer, U::Always}, ptr(&ForwardArgs::v)},
      {{"o", P::OutputBuffer, U::Always}, ptr(&ForwardArgs::o)},
      {{"lse", P::F32Buffer, U::Always}, ptr(&ForwardArgs::lse)},
      {{"alibi_slopes", P::F32Buffer, U::Alibi}, ptr(&ForwardArgs::alibiSlopes)},
      {{"q_descale", P::F32Buffer, U::Descale}, ptr(&ForwardArgs::qDescale)},
      {{"k_descale", P::F32Buffer, U::Descale}, ptr(&ForwardArgs::kDescale)},
      {{"v_descale", P::F32Buffer, U::Descale}, ptr(&ForwardArgs::vDescale)},
      {{"batch", P::Int64, U::Always}, i64(&ForwardArgs::batch)},
      {{"q_heads", P::Int64, U::Always}, i64(&ForwardArgs::queryHeads)},
      {{"kv_heads", P::Int64, U::Always}, i64(&ForwardArgs::kvHeads)},
      {{"q_len", P::Int64, U::Always}, i64(&ForwardArgs::queryLen)},
      {{"kv_len", P::Int64, U::Always}, i64(&ForwardArgs::keyLen)},
      {{"q_stride_b", P::Int64, U::Always}, stride(&ForwardArgs::qStride, 0)},
      {{"q_stride_h", P::Int64, U::Always}, stride(&ForwardArgs::qStride, 1)},
      {{"q_stride_s", P::Int64, U::Always}, stride(&ForwardArgs::qStride, 2)},
      {{"k_stride_b", P::Int64, U::Always}, stride(&ForwardArgs::kStride, 0)},
      {{"k_stride_h", P::Int64, U::Always}, stride(&ForwardArgs::kStride, 1)},
      {{"k_stride_s", P::Int64, U::Always}, stride(&ForwardArgs::kStride, 2)},
      {{"v_stride_b", P::Int64, U::Always}, stride(&ForwardArgs::vStride, 0)},
      {{"v_stride_h", P::Int64, U::Always}, stride(&ForwardArgs::vStride, 1)},
      {{"v_stride_s", P::Int64, U::Always}, stride(&ForwardArgs::vStride, 2)},
      {{"o_stride_b", P::Int64, U::Always}, stride(&ForwardArgs::oStride, 0)},
      {{"o_stride_h", P::Int64, U::Always}, stride(&ForwardArgs::oStride, 1)},
      {{"o_stride_s", P::Int64, U::Always}, stride(&ForwardArgs::oStride, 2)},
      {{"lse_stride_b", P::Int64, U::Always},
       [](const ForwardArgs &a) { return a.lseStride[0]; }},
      {{"lse_stride_h", P::Int64, U::Always},
       [](const ForwardArgs &a) { return a.lseStride[1]; }},
      {{"alibi_stride_b", P::Int64, U::Alibi}, i64(&ForwardArgs::alibiStrideB)},
      {{"descale_stride_b", P::Int64, U::Descale},
       [](const ForwardArgs &a) { return a.descaleStride[0]; }},
      {{"descale_stride_h", P::Int64, U::Descale},
       [](const ForwardArgs &a) { return a.descaleStride[1]; }},
      {{"kv_num_blocks", P::I32Buffer, U::BlockMask},
       [](const ForwardArgs &a) { return int64_t(a.blockMask.kvNumBlocks); }},
      {{"kv_indices", P::I32Buffer, U::BlockMask},
       [](const ForwardArgs &a) { return int64_t(a.blockMask.kvIndices); }},
      {{"full_kv_num_blocks", P::I32Buffer, U::BlockMask},
       [](const ForwardArgs &a) { return int64_t(a.blockMask.fullKvNumBlocks); }},
      {{"full_kv_indices", P::I32Buffer, U::BlockMask},
       [](const ForwardArgs &a) { return int64_t(a.blockMask.fullKvIndices); }},
      {{"block_mask_stride_b", P::Int64, U::BlockMask},
       [](const ForwardArgs &a) { return a.blockMask.strideB(); }},
      {{"block_mask_stride_h", P::Int64, U::BlockMask},
       [](const ForwardArgs &a) { return a.blockMask.strideH(); }},
      {{"block_mask_kv_blocks", P::Int64, U::BlockMask},
       [](const ForwardArgs &a) { return a.blockMask.kvBlocks; }},
  };
  return table;
}

std::vector<Param> fa::abi::forwardKernelParams(
    bool alibi, bool tensorMaps, bool descale, bool outputTensorMap,
    const std::vector<CaptureType> &captures, bool blockMask) {
  std::vector<Param> params;
  for (const Binding &b : forwardBindings())
    if (b.param.use == ParamUse::Always ||
        (alibi && b.param.use == ParamUse::Alibi) ||
        (tensorMaps && b.param.use == ParamUse::TensorMaps) ||
        (descale && b.param.use == ParamUse::Descale) ||
        (outputTensorMap && b.param.use == ParamUse::OutputTensorMap) ||
        (blockMask && b.param.use == ParamUse::BlockMask))
      params.push_back(b.param);
  for (Param &p : captureParams(captures))
    params.push_back(std::move(p));
  return params;
}

static const char kCapturePrefix[] = "capture", kExtentInfix[] = "_extent";

std::vector<Param>
fa::abi::captureParams(const std::vector<CaptureType> &captures) {
  std::vector<Param> params;
  for (size_t i = 0; i < captures.size(); ++i) {
    const CaptureType &c = captures[i];
    std::string name = kCapturePrefix + std::to_string(i);
    if (c.isScalar()) {
      params.push_back({name, c.isFloat() ? ParamType::F32 : ParamType::Int64,
                        ParamUse::Always});
      continue;
    }
    params.push_back({name, ParamType::CaptureBuffer, ParamUse::Always,
                      c.element == "index" ? "i64" : c.element});
    for (size_t d = 0; d < c.shape.size(); ++d)
      if (c.shape[d] == CaptureType::kDynamicExtent)
        params.push_back({name + kExtentInfix + std::to_string(d),
                          ParamType::Int64, ParamUse::Always});
  }
  return params;
}

bool fa::abi::captureParamOf(const std::string &name, int &capture,
                             int &dimension) {
  auto number = [](const std::string &text, size_t from, size_t to, int &out) {
    if (from >= to || to - from > 6)
      return false;
    for (size_t i = from; i < to; ++i)
      if (text[i] < '0' || text[i] > '9')
        return false;
    out = std::stoi(text.substr(from, to - from));
    return std::to_string(out) == text.substr(from, to - from);
  };
  size_t prefix = sizeof(kCapturePrefix) - 1;
  if (name.compare(0, prefix, kCapturePrefix) != 0)
    return false;
  size_t infix = name.find(kExtentInfix, prefix);
  dimension = -1;
  if (infix == std::string::npos)
    return number(name, prefix, name.size(), capture);
  return number(name, prefix, infix, capture) &&
         number(name, infix + sizeof(kExtentInfix) - 1, name.size(), dimension);
}

std::string fa::abi::outputElementTypeName(const std::string &elementType) {
  // Either spelling: the spec's "f8e4m3fn" or MLIR's "f8E4M3FN" (what
  // elementTypeName gives, and so what the manifests hold).
  ElementType type;
  if (!parseElementType(elementType, type) ||
      outputElementType(type) == type)
    return elementType;
  return elementTypeName(outputElementType(type));
}

bool fa::abi::tensorMapOf(const std::string &name, TensorMapInfo &info) {
  for (const char *tensor : {"q", "k", "v", "o", "do", "dq_acc"})
    if (name == std::string(tensor) + "_tmap") {
      info = {tensor, name != "k_tmap" && name != "v_tmap",
              name == "dq_acc_tmap", name == "o_tmap"};
      return true;
    }
  return false;
}

const char *fa::abi::tileSchedulerName(TileScheduler scheduler) {
  return scheduler == TileScheduler::Persistent ? "persistent" : "per_block";
}

bool fa::abi::tileSchedulerOf(const std::string &name,
                              TileScheduler &scheduler) {
  for (TileScheduler s : {TileScheduler::PerBlock, TileScheduler::Persistent})
    if (name == tileSchedulerName(s)) {
      scheduler = s;
      return true;
    }
  return false;
}

std::string fa::abi::paramTypeName(ParamType type,
                                   const std::string &elementType) {
  switch (type) {
  case ParamType::ElementBuffer:
    return "memref<?x" + elementType + ">";
  case ParamType::OutputBuffer:
    return "memref<?x" + outputElementTypeName(elementType) + ">";
  case ParamType::F32Buffer:
    return "memref<?xf32>";
  case ParamType::I32Buffer:
    return "memref<?xi32>";
  case ParamType::Int64:
    return "i64";
  case ParamType::F32:
    return "f32";
  case ParamType::CaptureBuffer:
    return "memref<?x" + elementType + ">";
  case ParamType::TensorMap:
    return "tensormap";
  }
  return "";
}

std::string fa::abi::paramTypeName(const Param &param,
                                   const std::string &elementType) {
  return paramTypeName(param.type, param.type == ParamType::CaptureBuffer
                                       ? param.element
                                       : elementType);
}

/// Capture parameters' rows follow the table's: kCaptureRows per capture
/// (its value, then one per dimension).
constexpr int kCaptureRows = 64;

int fa::abi::forwardParamRow(const std::string &name) {
  const std::vector<Binding> &table = forwardBindings();
  for (size_t row = 0; row < table.size(); ++row)
    if (name == table[row].param.name)
      return static_cast<int>(row);
  int capture, dimension;
  if (captureParamOf(name, capture, dimension) && dimension + 1 < kCaptureRows)
    return static_cast<int>(table.size()) + capture * kCaptureRows +
           dimension + 1;
  return -1;
}

int64_t fa::abi::forwardParamValueAt(int row, const ForwardArgs &args) {
  const std::vector<Binding> &table = forwardBindings();
  if (row < static_cast<int>(table.size()))
    return table[row].value(args);
  int capture = (row - static_cast<int>(table.size())) / kCaptureRows;
  int dimension = (row - static_cast<int>(table.size())) % kCaptureRows - 1;
  if (capture >= static_cast<int>(args.captures.size()))
    return 0;
  const ForwardArgs::Capture &c = args.captures[capture];
  if (dimension >= 0)
    return dimension < static_cast<int>(c.extents.size()) ? c.extents[dimension]
                                                          : 0;
  return c.data ? static_cast<int64_t>(c.data) : c.integer;
}

int64_t fa::abi::f32Bits(double value) {
  float single = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &single, 4);
  return bits;
}

bool fa::abi::forwardParamValue(const ForwardArgs &args,
                                const std::string &name, int64_t &value) {
  int row = forwardParamRow(name);
  if (row < 0)
    return false;
  value = forwardParamValueAt(row, args);
  return true;
}

//===----------------------------------------------------------------------===//
// The backward's kernels
//===----------------------------------------------------------------------===//

const char *fa::abi::backwardStepName(BackwardStep step) {
  switch (step) {
  case BackwardStep::Preprocess:
    return "preprocess";
  case BackwardStep::Main:
    return "main";
  case BackwardStep::Postprocess:
    return "postprocess";
  }
  return "";
}

std::string fa::abi::backwardKernelNameOf(const std::string &forwardName,
                                          bool deterministic) {
  const std::string forwardPrefix = "fa_fwd_";
  std::string name =
      forwardName.rfind(forwardPrefix, 0) == 0
          ? "fa_bwd_" + forwardName.substr(forwardPrefix.size())
          : forwardName + "_bwd";
  return deterministic ? name + "_det" : name;
}

BackwardWorkspace BackwardWorkspace::of(int64_t batch, int64_t queryHeads,
                                        int64_t queryLen, int64_t headDim) {
  auto align = [](int64_t bytes) { return (bytes + 255) / 256 * 256; };
  BackwardWorkspace w;
  int64_t rows = batch * queryHeads * queryLen;
  int64_t accumulatorRows = batch * queryHeads * gradQueryAccumulatorRows(queryLen);
  int64_t semaphores = batch * queryHeads * ((queryLen + 15) / 16);
  w.deltaOffset = 0;
  w.dqAccOffset = align(rows * 4);
  w.semaphoreOffset = w.dqAccOffset + align(accumulatorRows * headDim * 4);
  w.bytes = w.semaphoreOffset + align(semaphores * 4);
  w.zeroOffset = w.dqAccOffset;
  w.zeroBytes = w.bytes - w.dqAccOffset;
  return w;
}

namespace {
/// One row of the backward ABI: the parameter, the steps that take it, and
/// where its value comes from.
struct BackwardBinding {
  Param param;
  unsigned steps; ///< bit i: BackwardStep i
  std::function<int64_t(const BackwardArgs &, int64_t headDim)> value;
};
constexpr unsigned kPre = 1u << unsigned(BackwardStep::Preprocess);
constexpr unsigned kMain = 1u << unsigned(BackwardStep::Main);
constexpr unsigned kPost = 1u << unsigned(BackwardStep::Postprocess);
constexpr unsigned kAllSteps = kPre | kMain | kPost;
} // namespace

static const std::vector<BackwardBinding> &backwardBindings() {
  using P = ParamType;
  using U = ParamUse;
  using A = BackwardArgs;
  auto fwd = [](auto get) {
    return [get](const A &a, int64_t) { return int64_t(get(a.forward)); };
  };
  auto own = [](auto get) {
    return [get](const A &a, int64_t) { return int64_t(get(a)); };
  };
  auto workspace = [](const A &a, int64_t d) {
    return BackwardWorkspace::of(a.forward.batch, a.forward.queryHeads,
                                 a.forward.queryLen, d);
  };
  auto delta = [workspace](const A &a, int64_t d) {
    return int64_t(a.workspace) + workspace(a, d).deltaOffset;
  };
  auto dqAcc = [workspace](const A &a, int64_t d) {
    return int64_t(a.workspace) + workspace(a, d).dqAccOffset;
  };
  auto semaphores = [workspace](const A &a, int64_t d) {
    return int64_t(a.workspace) + workspace(a, d).semaphoreOffset;
  };
  // delta is [B, Hq, M] and dq_acc [B, Hq, M', D], both contiguous.
  auto rows = [](const A &a) { return a.forward.queryLen; };
  auto accumulatorRows = [](const A &a) {
    return gradQueryAccumulatorRows(a.forward.queryLen);
  };
  auto heads = [](const A &a) { return a.forward.queryHeads; };
  auto none = [](const A &, int64_t) { return int64_t(0); };
  static const std::vector<BackwardBinding> table = {
      {{"q_tmap", P::TensorMap, U::TensorMaps}, kMain, none},
      {{"k_tmap", P::TensorMap, U::TensorMaps}, kMain, none},
      {{"v_tmap", P::TensorMap, U::TensorMaps}, kMain, none},
      {{"do_tmap", P::TensorMap, U::TensorMaps}, kMain, none},
      {{"dq_acc_tmap", P::TensorMap, U::TensorMaps}, kMain, none},
      {{"q", P::ElementBuffer, U::Always}, kMain, fwd([](auto &f) { return f.q; })},
      {{"k", P::ElementBuffer, U::Always}, kMain, fwd([](auto &f) { return f.k; })},
      {{"v", P::ElementBuffer, U::Always}, kMain, fwd([](auto &f) { return f.v; })},
      {{"o", P::ElementBuffer, U::Always}, kPre, fwd([](auto &f) { return f.o; })},
      {{"do", P::ElementBuffer, U::Always}, kPre | kMain,
       own([](const A &a) { return a.gradOut; })},
      {{"lse", P::F32Buffer, U::Always}, kMain, fwd([](auto &f) { return f.lse; })},
      {{"delta", P::F32Buffer, U::Always}, kPre | kMain, delta},
      {{"dq_acc", P::F32Buffer, U::Always}, kMain | kPost, dqAcc},
      {{"dq_semaphore", P::I32Buffer, U::Always}, kMain, semaphores},
      {{"dq", P::ElementBuffer, U::Always}, kPost, own([](const A &a) { return a.dq; })},
      {{"dk", P::ElementBuffer, U::Always}, kMain, own([](const A &a) { return a.dk; })},
      {{"dv", P::ElementBuffer, U::Always}, kMain, own([](const A &a) { return a.dv; })},
      {{"alibi_slopes", P::F32Buffer, U::Alibi}, kMain,
       fwd([](auto &f) { return f.alibiSlopes; })},
      {{"batch", P::Int64, U::Always}, kAllSteps, fwd([](auto &f) { return f.batch; })},
      {{"q_heads", P::Int64, U::Always}, kAllSteps,
       fwd([](auto &f) { return f.queryHeads; })},
      {{"kv_heads", P::Int64, U::Always}, kMain, fwd([](auto &f) { return f.kvHeads; })},
      {{"q_len", P::Int64, U::Always}, kAllSteps, fwd([](auto &f) { return f.queryLen; })},
      {{"kv_len", P::Int64, U::Always}, kMain, fwd([](auto &f) { return f.keyLen; })},
      {{"deterministic", P::Int64, U::Always}, kMain,
       own([](const A &a) { return int64_t(a.deterministic); })},
#define FA_STRIDES(NAME, STEPS, GET)                                           \
  {{NAME "_stride_b", P::Int64, U::Always}, STEPS,                             \
   own([](const A &a) { return (GET)[0]; })},                                  \
      {{NAME "_stride_h", P::Int64, U::Always}, STEPS,                         \
       own([](const A &a) { return (GET)[1]; })},                              \
      {{NAME "_stride_s", P::Int64, U::Always}, STEPS,                         \
       own([](const A &a) { return (GET)[2]; })}
      FA_STRIDES("q", kMain, a.forward.qStride),
      FA_STRIDES("k", kMain, a.forward.kStride),
      FA_STRIDES("v", kMain, a.forward.vStride),
      FA_STRIDES("o", kPre, a.forward.oStride),
      FA_STRIDES("do", kPre | kMain, a.gradOutStride),
      FA_STRIDES("dq", kPost, a.dqStride),
      FA_STRIDES("dk", kMain, a.dkStride),
      FA_STRIDES("dv", kMain, a.dvStride),
#undef FA_STRIDES
      {{"lse_stride_b", P::Int64, U::Always}, kMain,
       own([](const A &a) { return a.forward.lseStride[0]; })},
      {{"lse_stride_h", P::Int64, U::Always}, kMain,
       own([](const A &a) { return a.forward.lseStride[1]; })},
      {{"delta_stride_b", P::Int64, U::Always}, kPre | kMain,
       own([=](const A &a) { return heads(a) * rows(a); })},
      {{"delta_stride_h", P::Int64, U::Always}, kPre | kMain, own(rows)},
      {{"dq_acc_stride_b", P::Int64, U::Always}, kMain | kPost,
       [=](const A &a, int64_t d) { return heads(a) * accumulatorRows(a) * d; }},
      {{"dq_acc_stride_h", P::Int64, U::Always}, kMain | kPost,
       [=](const A &a, int64_t d) { return accumulatorRows(a) * d; }},
      {{"dq_acc_stride_s", P::Int64, U::Always}, kMain | kPost,
       [](const A &, int64_t d) { return d; }},
      {{"alibi_stride_b", P::Int64, U::Alibi}, kMain,
       fwd([](auto &f) { return f.alibiStrideB; })},
  };
  return table;
}

std::vector<Param> fa::abi::backwardKernelParams(BackwardStep step, bool alibi,
                                                 bool tensorMaps,
                                                 const std::vector<CaptureType> &captures) {
  std::vector<Param> params;
  for (const BackwardBinding &b : backwardBindings())
    if ((b.steps & (1u << unsigned(step))) &&
        (b.param.use == ParamUse::Always ||
         (alibi && b.param.use == ParamUse::Alibi) ||
         (tensorMaps && b.param.use == ParamUse::TensorMaps)))
      params.push_back(b.param);
  // Only the main kernel evaluates the regions.
  if (step == BackwardStep::Main)
    for (Param &p : captureParams(captures))
      params.push_back(std::move(p));
  return params;
}

bool fa::abi::backwardParamValue(const BackwardArgs &args, int64_t headDim,
                                 const std::string &name, int64_t &value) {
  for (const BackwardBinding &b : backwardBindings())
    if (name == b.param.name) {
      value = b.value(args, headDim);
      return true;
    }
  return false;
}
