//===- KernelAbi.cpp - the forward kernel's parameters, once --------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/KernelAbi.h"

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
      {{"q", P::ElementBuffer, U::Always}, ptr(&ForwardArgs::q)},
      {{"k", P::ElementBuffer, U::Always}, ptr(&ForwardArgs::k)},
      {{"v", P::ElementBuffer, U::Always}, ptr(&ForwardArgs::v)},
      {{"o", P::ElementBuffer, U::Always}, ptr(&ForwardArgs::o)},
      {{"lse", P::F32Buffer, U::Always}, ptr(&ForwardArgs::lse)},
      {{"alibi_slopes", P::F32Buffer, U::Alibi}, ptr(&ForwardArgs::alibiSlopes)},
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
  };
  return table;
}

std::vector<Param> fa::abi::forwardKernelParams(bool alibi, bool tensorMaps) {
  std::vector<Param> params;
  for (const Binding &b : forwardBindings())
    if (b.param.use == ParamUse::Always ||
        (alibi && b.param.use == ParamUse::Alibi) ||
        (tensorMaps && b.param.use == ParamUse::TensorMaps))
      params.push_back(b.param);
  return params;
}

bool fa::abi::tensorMapOf(const std::string &name, TensorMapInfo &info) {
  for (const char *tensor : {"q", "k", "v"})
    if (name == std::string(tensor) + "_tmap") {
      info = {tensor, name == "q_tmap"};
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
  case ParamType::F32Buffer:
    return "memref<?xf32>";
  case ParamType::Int64:
    return "i64";
  case ParamType::TensorMap:
    return "tensormap";
  }
  return "";
}

bool fa::abi::forwardParamValue(const ForwardArgs &args,
                                const std::string &name, int64_t &value) {
  for (const Binding &b : forwardBindings())
    if (name == b.param.name) {
      value = b.value(args);
      return true;
    }
  return false;
}
