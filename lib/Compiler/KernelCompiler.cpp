//===- KernelCompiler.cpp - spec -> PTX + manifest ------------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Compiler/KernelCompiler.h"

#include "fa/Compiler/AttentionModule.h"
#include "fa/Compiler/VariantProgram.h"
#include "fa/Conversion/FAToGPU/BackwardKernel.h"
#include "fa/Conversion/Passes.h"
#include "fa/Dialect/FA/IR/FAOps.h"
#include "fa/Dialect/FA/Transforms/Passes.h"
#include "fa/Dialect/FA/Utils/PipelineInput.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/raw_ostream.h"

#include "fa/runtime/Json.h"
#include "fa/runtime/KernelAbi.h"
#include "fa/runtime/Limits.h"

#include "mlir/IR/Verifier.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

using namespace mlir;
using namespace mlir::fa;

#include "GeneratorRevision.inc" // FA_GENERATOR_REVISION, made at build time

const char *mlir::fa::generatorRevision() { return FA_GENERATOR_REVISION; }

std::unique_ptr<MLIRContext> mlir::fa::createCompilerContext() {
  DialectRegistry registry;
  registry.insert<FADialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

static std::string maskTag(const ::fa::ref::Mask &mask) {
  auto bound = [](int64_t b) { return b < 0 ? std::string("inf") : std::to_string(b); };
  switch (mask.kind) {
  case ::fa::MaskKind::None:
    return "none";
  case ::fa::MaskKind::Causal:
    return "causal";
  case ::fa::MaskKind::CausalTopLeft:
    return "causal_tl";
  case ::fa::MaskKind::Window:
    return "win" + bound(mask.left) + "_" + bound(mask.right);
  }
  return "none";
}

static std::string conventionalName(const char *direction,
                                    const ::fa::AttentionSpec &spec,
                                    const std::string &target) {
  std::ostringstream os;
  std::string chip = target;
  chip.erase(std::remove(chip.begin(), chip.end(), '_'), chip.end());
  os << "fa_" << direction << "_" << chip << "_" << ::fa::elementTypeName(spec.dtype) << "_d"
     << spec.headDim;
  if (spec.valueDim != spec.headDim)
    os << "_dv" << spec.valueDim;
  os << "_" << maskTag(spec.mask);
  if (spec.softcap > 0)
    os << "_cap";
  if (spec.alibi != ::fa::AlibiKind::None)
    os << "_alibi";
  return os.str();
}

std::string mlir::fa::kernelName(const ::fa::AttentionSpec &spec,
                                 const std::string &target) {
  return conventionalName("fwd", spec, target);
}

std::string mlir::fa::backwardKernelName(const ::fa::AttentionSpec &spec,
                                         const std::string &target,
                                         bool deterministic) {
  return conventionalName("bwd", spec, target) + (deterministic ? "_det" : "");
}

std::string mlir::fa::negativeControlKernelName(const std::string &name,
                                                bool omitRowDot) {
  return omitRowDot ? name + "_no_row_dot" : name;
}

/// Runs fa-to-ptx on `module` and pulls the PTX out of its gpu.binary.
static bool lowerToPTX(MLIRContext &context, ModuleOp module,
                       const std::string &target, int64_t blockM,
                       int64_t blockN, std::string &ptx, std::string &error,
                       int64_t sharedMemoryBudgetKB, bool omitRowDot = false,
                       bool deterministic = false) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      os << diag.str() << "\n";
    return success();
  });
  PassManager pm(&context);
  FAToPTXOptions options;
  options.chip = target;
  options.blockM = blockM;
  options.blockN = blockN;
  options.testOmitRowDot = omitRowDot;
  options.deterministic = deterministic;
  options.sharedMemoryBudget = sharedMemoryBudgetKB;
  buildFAToPTXPipeline(pm, options);
  if (failed(pm.run(module))) {
    error = llvm::StringRef(diagnostics).trim().str();
    return false;
  }
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      if (auto gpuObject = dyn_cast<gpu::ObjectAttr>(object))
        ptx = gpuObject.getObject().str();
  });
  if (ptx.empty()) {
    error = "fa-to-ptx produced no gpu.binary";
    return false;
  }
  return true;
}

/// The fields every manifest has after its kind: the PTX file, the target
/// and the spec. Exact: the runtime reads the scale and softcap back from
/// this text, and its reference must use the values the kernel was built
/// with.
static void writeSpecFields(std::ostream &os, const std::string &name,
                            const ::fa::AttentionSpec &spec,
                            const std::string &target) {
  using ::fa::json::quote;
  os << "  \"ptx\": " << quote(name + ".ptx") << ",\n";
  os << "  \"target\": " << quote(target) << ",\n";
  os << "  \"spec\": " << quote(::fa::specText(spec)) << ",\n";
  os << "  \"dtype\": " << quote(::fa::elementTypeName(spec.dtype)) << ",\n";
  os << "  \"head_dim\": " << spec.headDim << ",\n";
  os << "  \"value_dim\": " << spec.valueDim << ",\n";
  os << "  \"mask\": " << quote(::fa::maskName(spec.mask)) << ",\n";
  os << "  \"scale\": " << ::fa::exactDouble(spec.scaleOrDefault()) << ",\n";
}

/// A kernel's "params" list from the ABI table.
static void writeParams(std::ostream &os, const std::vector<::fa::abi::Param> &params,
                        const ::fa::AttentionSpec &spec, const char *indent) {
  using ::fa::json::quote;
  os << indent << "\"params\": [\n";
  for (size_t i = 0; i < params.size(); ++i)
    os << indent << "  {\"name\": " << quote(params[i].name) << ", \"type\": "
       << quote(::fa::abi::paramTypeName(params[i],
                                         ::fa::elementTypeName(spec.dtype)))
       << "}" << (i + 1 < params.size() ? "," : "") << "\n";
  os << indent << "]";
}

static std::string manifestText(const std::string &name,
                                const ::fa::AttentionSpec &spec,
                                const std::string &target,
                                const AttentionKernelConfig &config,
                                const AttentionGPUStrategy &strategy,
                                const ::fa::Variant &variant) {
  int64_t stages = config.stages, warps = config.warps;
  int64_t smemBytes = strategy.dynamicSharedMemoryBytes(config);
  using ::fa::json::quote;
  std::ostringstream os;
  os << "{\n";
  os << "  \"kernel\": " << quote(name) << ",\n";
  os << "  \"kind\": \"forward\",\n";
  writeSpecFields(os, name, spec, target);
  os << "  \"tile\": {\"block_m\": " << spec.blockM << ", \"block_n\": "
     << spec.blockN << ", \"stages\": " << stages << ", \"warps\": " << warps
     << "},\n";
  os << "  \"schedule\": "
     << scheduleJson(strategy.scheduleKnobs(KernelKind::Forward), config.schedule,
                     config)
     << ",\n";
  os << "  \"block\": [" << strategy.blockThreads(config) << ", 1, 1],\n";
  ::fa::abi::TileScheduler scheduler =
      strategy.persistentTiles(config) ? ::fa::abi::TileScheduler::Persistent
                                 : ::fa::abi::TileScheduler::PerBlock;
  os << "  \"scheduler\": " << quote(::fa::abi::tileSchedulerName(scheduler))
     << ",\n";
  if (scheduler == ::fa::abi::TileScheduler::Persistent)
    os << "  \"grid\": [\"min(ceil(q_len / " << spec.blockM
       << ") * q_heads * batch, SMs * resident blocks per SM)\", 1, 1],\n";
  else
    os << "  \"grid\": [\"ceil(q_len / " << spec.blockM
       << ")\", \"q_heads\", \"batch\"],\n";
  os << "  \"dynamic_shared_memory\": " << smemBytes << ",\n";
  os << "  \"shared_memory_budget\": " << strategy.sharedMemoryBudget(config)
     << ",\n";
  // The parameters are the ABI table's (fa/runtime/KernelAbi.h), the same
  // list the gpu.func signature was built from.
  writeParams(os,
              ::fa::abi::forwardKernelParams(
                  config.alibi, strategy.usesTensorMaps(),
                  spec.dtype == ::fa::ElementType::F8E4M3FN,
                  strategy.storesOutputByTensorMap(config), variant.captures,
                  config.blockSparse()),
              spec, "  ");
  os << ",\n";
  if (config.blockSparse())
    os << "  \"block_sparse\": {\"q_block\": " << config.sparseQBlock
       << ", \"kv_block\": " << config.sparseKvBlock << "},\n";
  if (!variant.empty())
    os << "  \"variant\": " << ::fa::variantJson(variant) << ",\n";
  os << "  \"memref_abi\": \"each memref<?xT> is 5 launch parameters: "
        "allocated ptr, aligned ptr, offset, size, stride\",\n";
  os << "  \"generator\": " << quote(std::string("fa-mlir ") + generatorRevision())
     << "\n";
  os << "}\n";
  return os.str();
}

/// The kernel configuration a spec states (what the conversion will read
/// back off the tiled IR).
static bool specHasAlibi(const ::fa::AttentionSpec &spec) {
  return spec.alibi != ::fa::AlibiKind::None;
}

static AttentionKernelConfig configOfSpec(MLIRContext &context,
                                          const ::fa::AttentionSpec &spec,
                                          int64_t stages, int64_t warps) {
  AttentionKernelConfig config;
  switch (spec.dtype) {
  case ::fa::ElementType::F16:
    config.elementType = Float16Type::get(&context);
    break;
  case ::fa::ElementType::F8E4M3FN:
    config.elementType = Float8E4M3FNType::get(&context);
    break;
  default:
    config.elementType = BFloat16Type::get(&context);
  }
  config.headDim = spec.headDim;
  config.valueDim = spec.valueDim;
  config.blockM = spec.blockM;
  config.blockN = spec.blockN;
  config.stages = stages;
  config.warps = warps;
  config.mask = MaskAttr::get(&context, spec.mask.kind, spec.mask.left,
                              spec.mask.right);
  config.scale = spec.scaleOrDefault();
  config.softcap = spec.softcap;
  config.alibi = specHasAlibi(spec);
  return config;
}

/// The manifest of a kernel the strategy built from `config`: the same
/// facts the conversion used, so block size and shared memory match.
static std::string describeKernel(const std::string &name,
                                  const ::fa::AttentionSpec &spec,
                                  const std::string &target,
                                  const AttentionKernelConfig &config,
                                  const ::fa::Variant &variant = {}) {
  std::unique_ptr<AttentionGPUStrategy> strategy =
      createAttentionStrategy(target);
  return manifestText(name, spec, target, config, *strategy, variant);
}

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

bool mlir::fa::compileForwardKernel(MLIRContext &context,
                                    const ::fa::AttentionSpec &spec,
                                    const std::string &target,
                                    const std::string &name,
                                    CompiledKernel &out, std::string &error,
                                    bool &badInput, int64_t sharedMemoryBudgetKB,
                                    const ScheduleOverrides &schedule) {
  auto start = std::chrono::steady_clock::now();
  // Every front door checks the same ranges; the name becomes the PTX
  // entry's, and LLVM aborts on a name that is not an identifier.
  badInput = true;
  if (!::fa::checkSpec(spec, error))
    return false;
  if (error = unsupportedSharedMemoryBudget(sharedMemoryBudgetKB); !error.empty())
    return false;
  if (std::string reason = unsupportedKernelName(name); !reason.empty()) {
    error = "kernel name " + reason;
    return false;
  }
  // The module states #fa.tile<..., stages and warps = the chip's, and
  // the schedule's overrides>; `stages` among them is the tile's.
  std::unique_ptr<AttentionGPUStrategy> strategy = createAttentionStrategy(target);
  AttentionGPUStrategy::Pipeline pipeline =
      strategy ? strategy->forwardPipeline(
                     spec.blockM, spec.blockN, spec.headDim, spec.valueDim,
                     spec.dtype == ::fa::ElementType::F8E4M3FN)
               : AttentionGPUStrategy::Pipeline{4, 2};
  ScheduleOverrides knobs;
  for (const auto &[knob, value] : schedule) {
    if (knob != "stages") {
      knobs.emplace_back(knob, value);
      continue;
    }
    if (llvm::StringRef(value).getAsInteger(10, pipeline.stages)) {
      error = "'stages' takes an integer, got '" + value + "'";
      return false;
    }
  }
  AttentionKernelConfig config =
      configOfSpec(context, spec, pipeline.stages, pipeline.warps);
  config.sharedMemoryBudget = sharedMemoryBudgetKB * 1024;
  config.scheduleOverrides = knobs;
  // What the chip cannot build is the user's to fix, said before any pass.
  if (strategy)
    error = resolveSchedule(*strategy, config, KernelKind::Forward);
  if (error.empty())
    error = checkAttentionKernel(target, config);
  badInput = !error.empty();
  if (badInput)
    return false;
  // The kernel is generic in B, H, M and N (they are launch parameters);
  // the module states one representative size so that fa-tile can tile it.
  ::fa::ProblemSize size;
  size.queryLen = size.keyLen = 2 * std::max(spec.blockM, spec.blockN);
  ::fa::AttentionSpec tiled = spec;
  OwningOpRef<ModuleOp> module =
      buildAttentionModule(context, tiled, size, /*withBackward=*/false, error);
  if (!module) {
    badInput = true;
    return false;
  }
  // One function, named after the kernel, holding the tensor-level op.
  module->walk([&](func::FuncOp func) { func.setSymName(name); });
  module->walk([&](AttentionOp op) {
    op.setTileAttr(TileAttr::get(&context, spec.blockM, spec.blockN,
                                 config.stages, config.warps,
                                 scheduleAttrOf(&context, knobs)));
  });
  if (!lowerToPTX(context, *module, target, spec.blockM, spec.blockN, out.ptx,
                  error, sharedMemoryBudgetKB))
    return false;
  out.name = name;
  out.manifest = describeKernel(name, spec, target, config);
  out.seconds = secondsSince(start);
  return true;
}

/// The backward's manifest: the spec, the tile of the main kernel, and per
/// step (KernelAbi.h's BackwardStep) its entry, block, shared memory and
/// parameters.
static std::string backwardManifestText(const std::string &name,
                                        const ::fa::AttentionSpec &spec,
                                        const std::string &target,
                                        const AttentionKernelConfig &config,
                                        const AttentionGPUStrategy &strategy,
                                        bool omitRowDot,
                                        const ::fa::Variant &variant = {}) {
  using ::fa::json::quote;
  using ::fa::abi::BackwardStep;
  std::ostringstream os;
  os << "{\n";
  os << "  \"kernel\": " << quote(name) << ",\n";
  os << "  \"kind\": \"backward\",\n";
  writeSpecFields(os, name, spec, target);
  os << "  \"tile\": {\"block_m\": " << spec.blockM << ", \"block_n\": "
     << spec.blockN << ", \"stages\": " << config.stages
     << ", \"warps\": " << config.warps << "},\n";
  os << "  \"schedule\": "
     << scheduleJson(strategy.scheduleKnobs(KernelKind::Backward),
                     config.schedule, config)
     << ",\n";
  os << "  \"negative_control\": " << quote(omitRowDot ? "no-row-dot" : "none")
     << ",\n";
  // Built deterministic, the main kernel adds dQ in a fixed order through
  // dq_semaphore when launched with "deterministic" (KernelAbi.h).
  os << "  \"deterministic_mode\": " << (config.deterministic ? "true" : "false")
     << ",\n";
  os << "  \"shared_memory_budget\": " << strategy.sharedMemoryBudget(config)
     << ",\n";
  os << "  \"steps\": {\n";
  std::string rows = std::to_string(::fa::abi::kBackwardRowsPerBlock);
  for (BackwardStep step : {BackwardStep::Preprocess, BackwardStep::Main,
                            BackwardStep::Postprocess}) {
    bool main = step == BackwardStep::Main;
    os << "    " << quote(::fa::abi::backwardStepName(step)) << ": {\n";
    os << "      \"entry\": " << quote(backwardEntryName(name, step)) << ",\n";
    os << "      \"block\": ["
       << (main ? strategy.backwardBlockThreads(config) : kBackwardEdgeThreads)
       << ", 1, 1],\n";
    if (main)
      os << "      \"grid\": [\"ceil(kv_len / " << spec.blockN
         << ")\", \"kv_heads\", \"batch\"],\n";
    else
      os << "      \"grid\": [\"ceil(q_len / " << rows
         << ")\", \"q_heads\", \"batch\"],\n";
    os << "      \"dynamic_shared_memory\": "
       << (main ? strategy.backwardSharedMemoryBytes(config) : 0) << ",\n";
    writeParams(os,
                ::fa::abi::backwardKernelParams(step, config.alibi,
                                                main && strategy.usesTensorMaps(),
                                                variant.captures),
                spec, "      ");
    os << "\n    }" << (step == BackwardStep::Postprocess ? "" : ",") << "\n";
  }
  os << "  },\n";
  if (!variant.empty())
    os << "  \"variant\": " << ::fa::variantJson(variant) << ",\n";
  os << "  \"memref_abi\": \"each memref<?xT> is 5 launch parameters: "
        "allocated ptr, aligned ptr, offset, size, stride\",\n";
  os << "  \"generator\": " << quote(std::string("fa-mlir ") + generatorRevision())
     << "\n";
  os << "}\n";
  return os.str();
}

bool mlir::fa::compileBackwardKernel(MLIRContext &context,
                                     const ::fa::AttentionSpec &spec,
                                     const std::string &target,
                                     const std::string &name,
                                     CompiledKernel &out, std::string &error,
                                     bool &badInput, bool omitRowDot,
                                     bool deterministic,
                                     int64_t sharedMemoryBudgetKB,
                                     const ScheduleOverrides &schedule) {
  auto start = std::chrono::steady_clock::now();
  badInput = true;
  if (!::fa::checkSpec(spec, error))
    return false;
  if (error = unsupportedSharedMemoryBudget(sharedMemoryBudgetKB); !error.empty())
    return false;
  if (std::string reason = unsupportedKernelName(name, /*backward=*/true);
      !reason.empty()) {
    error = "kernel name " + reason;
    return false;
  }
  std::unique_ptr<AttentionGPUStrategy> strategy = createAttentionStrategy(target);
  if (!strategy) {
    error = checkAttentionKernel(target, AttentionKernelConfig());
    return false;
  }
  AttentionKernelConfig config = configOfSpec(
      context, spec, 2,
      strategy->backwardWarpsFor(spec.blockM, spec.blockN, spec.headDim,
                                 spec.valueDim));
  config.deterministic = deterministic;
  config.sharedMemoryBudget = sharedMemoryBudgetKB * 1024;
  config.scheduleOverrides = schedule;
  error = resolveSchedule(*strategy, config, KernelKind::Backward);
  if (error.empty())
    error = strategy->unsupportedBackwardReason(config);
  if (!error.empty())
    return false;
  // Generic in B, H, M and N like the forward; two query heads per KV head
  // so the nest has its group loop (folded away, it would be found too).
  ::fa::ProblemSize size;
  size.queryLen = size.keyLen = 2 * std::max(spec.blockM, spec.blockN);
  size.queryHeads = 2;
  OwningOpRef<ModuleOp> module =
      buildAttentionModule(context, spec, size, /*withBackward=*/true, error);
  if (!module)
    return false;
  badInput = false;
  SmallVector<func::FuncOp> forward;
  module->walk([&](func::FuncOp func) {
    if (func.getSymName() == "fa_forward")
      forward.push_back(func);
    else
      func.setSymName(name);
  });
  for (func::FuncOp func : forward)
    func.erase();
  module->walk([&](AttentionGradOp op) {
    op.setTileAttr(TileAttr::get(&context, spec.blockM, spec.blockN,
                                 config.stages, config.warps,
                                 scheduleAttrOf(&context, schedule)));
  });
  if (!lowerToPTX(context, *module, target, spec.blockM, spec.blockN, out.ptx,
                  error, sharedMemoryBudgetKB, omitRowDot, deterministic))
    return false;
  out.name = name;
  out.manifest =
      backwardManifestText(name, spec, target, config, *strategy, omitRowDot);
  out.seconds = secondsSince(start);
  return true;
}

bool mlir::fa::writeKernel(const CompiledKernel &kernel,
                           const std::string &directory, std::string &error) {
  for (auto [suffix, text] :
       {std::pair<std::string, const std::string *>{".ptx", &kernel.ptx},
        {".json", &kernel.manifest}}) {
    std::string path = directory + "/" + kernel.name + suffix;
    std::ofstream file(path, std::ios::binary);
    file << *text;
    if (!file) {
      error = "cannot write " + path;
      return false;
    }
  }
  return true;
}

void mlir::fa::applyTunedTile(::fa::AttentionSpec &spec,
                              const std::string &target) {
  std::unique_ptr<AttentionGPUStrategy> strategy = createAttentionStrategy(target);
  if (!strategy)
    return; // checkAttentionKernel names the unknown chip
  AttentionGPUStrategy::Tile tile = strategy->tunedTile(
      spec.headDim, spec.valueDim, spec.mask.kind,
      spec.dtype == ::fa::ElementType::F8E4M3FN);
  spec.blockM = tile.blockM;
  spec.blockN = tile.blockN;
}

void mlir::fa::applyTunedBackwardTile(::fa::AttentionSpec &spec,
                                      const std::string &target,
                                      bool deterministic,
                                      int64_t sharedMemoryBudgetKB) {
  std::unique_ptr<AttentionGPUStrategy> strategy = createAttentionStrategy(target);
  if (!strategy)
    return; // checkAttentionKernel names the unknown chip
  AttentionGPUStrategy::Tile tile = strategy->tunedBackwardTile(
      spec.headDim, spec.valueDim, spec.mask.kind != ::fa::MaskKind::None,
      deterministic, sharedMemoryBudgetKB * 1024);
  spec.blockM = tile.blockM;
  spec.blockN = tile.blockN;
}

void mlir::fa::applyTunedTileUnlessGiven(::fa::AttentionSpec &spec,
                                         const std::vector<std::string> &keysGiven,
                                         const std::string &target, bool backward,
                                         bool deterministic,
                                         int64_t sharedMemoryBudgetKB) {
  ::fa::AttentionSpec tuned = spec;
  if (backward)
    applyTunedBackwardTile(tuned, target, deterministic, sharedMemoryBudgetKB);
  else
    applyTunedTile(tuned, target);
  auto given = [&](const char *key) {
    return llvm::is_contained(keysGiven, key);
  };
  if (!given("block_m"))
    spec.blockM = tuned.blockM;
  if (!given("block_n"))
    spec.blockN = tuned.blockN;
}

static ::fa::AttentionSpec standardSpec(::fa::ElementType dtype, int64_t d,
                                        ::fa::MaskKind mask) {
  ::fa::AttentionSpec spec;
  spec.headDim = spec.valueDim = d;
  spec.dtype = dtype;
  spec.mask.kind = mask;
  return spec;
}

std::vector<StandardKernel> mlir::fa::standardSet(const std::string &target) {
  std::vector<StandardKernel> kernels;
  auto add = [&](const ::fa::AttentionSpec &spec, const char *chip,
                 bool withBackward = false) {
    if (target.empty() || target == chip)
      kernels.push_back({spec, chip, withBackward});
  };
  // Every grid kernel has its backward (dK, dV in registers: at D = 256
  // their head dims split over warp groups on sm_80, warpgroups on sm_90a).
  auto addGrid = [&](const char *chip) {
    for (::fa::ElementType dtype :
         {::fa::ElementType::F16, ::fa::ElementType::BF16})
      for (int64_t d : {64, 128, 256})
        for (::fa::MaskKind mask :
             {::fa::MaskKind::None, ::fa::MaskKind::Causal})
          add(standardSpec(dtype, d, mask), chip, /*withBackward=*/true);
  };
  addGrid("sm_80");
  ::fa::AttentionSpec window;
  window.headDim = window.valueDim = 128;
  window.mask = {::fa::MaskKind::Window, 256, 0};
  add(window, "sm_80");
  ::fa::AttentionSpec narrowValue;
  narrowValue.headDim = 128;
  narrowValue.valueDim = 64;
  narrowValue.mask.kind = ::fa::MaskKind::Causal;
  add(narrowValue, "sm_80");
  // A head dim that is not a power of two (padded to 128 in shared memory,
  // to 96 in the MMAs), and the score modifications of the L2 IR.
  ::fa::AttentionSpec d96;
  d96.headDim = d96.valueDim = 96;
  add(d96, "sm_80");
  ::fa::AttentionSpec softcapped;
  softcapped.headDim = softcapped.valueDim = 128;
  softcapped.softcap = 30.0;
  add(softcapped, "sm_80");
  ::fa::AttentionSpec alibi;
  alibi.headDim = alibi.valueDim = 128;
  alibi.alibi = ::fa::AlibiKind::Head;
  add(alibi, "sm_80");
  addGrid("sm_90a");
  // e4m3 (FP8) forward: D {128, 256} x {none, causal}, per-tensor descales
  // (the same kernel takes per-head ones: the launch's descale strides).
  for (int64_t d : {128, 256})
    for (::fa::MaskKind mask :
         {::fa::MaskKind::None, ::fa::MaskKind::Causal})
      add(standardSpec(::fa::ElementType::F8E4M3FN, d, mask), "sm_90a");
  for (StandardKernel &kernel : kernels)
    applyTunedTile(kernel.spec, kernel.target);
  return kernels;
}

/// Makes `func` return `attention`'s LSE where it returns only O: every
/// forward kernel writes the LSE its ABI passes (a backward or a caller
/// combining partial results reads it), whatever the function returns.
static void returnLse(AttentionOp attention, func::FuncOp func) {
  if (attention.getLse())
    return;
  OpBuilder b(attention);
  RankedTensorType query = attention.getQuery().getType();
  OperationState state(attention.getLoc(), attention->getName());
  state.addOperands(attention->getOperands());
  state.addAttributes(attention->getAttrs());
  state.addTypes({attention.getOutput().getType(),
                  RankedTensorType::get({query.getDimSize(0), query.getDimSize(1),
                                         query.getDimSize(2)},
                                        b.getF32Type())});
  for (Region &region : attention->getRegions())
    state.addRegion()->takeBody(region);
  Operation *withLse = b.create(state);
  attention.getOutput().replaceAllUsesWith(withLse->getResult(0));
  attention.erase();
  for (Block &block : func.getBody())
    if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator()))
      ret->insertOperands(ret->getNumOperands(), withLse->getResult(1));
  Operation *terminator = func.getBody().back().getTerminator();
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 terminator->getOperandTypes()));
}

/// The spec an fa.attention's attributes and operand types state (its
/// tile aside).
static ::fa::AttentionSpec specOfAttention(AttentionOp op) {
  ::fa::AttentionSpec spec;
  Type element = op.getQuery().getType().getElementType();
  spec.dtype = element.isF16() ? ::fa::ElementType::F16
               : element.isBF16() ? ::fa::ElementType::BF16
                                  : ::fa::ElementType::F8E4M3FN;
  spec.headDim = op.getQuery().getType().getDimSize(3);
  spec.valueDim = op.getValue().getType().getDimSize(3);
  MaskAttr mask = op.getMaskOrDefault();
  spec.mask = {mask.getKind(), mask.getLeft(), mask.getRight()};
  spec.scale = op.getScaleOrDefault();
  spec.softcap = op.getSoftcapOrZero();
  if (Value slopes = op.getAlibiSlopes())
    spec.alibi = cast<RankedTensorType>(slopes.getType()).getRank() == 1
                     ? ::fa::AlibiKind::Head
                     : ::fa::AlibiKind::BatchHead;
  return spec;
}

/// fa-tile's rule (and fa-recompute-backward's): a block past a static M
/// or N shrinks to it, rounded up to a power of two.
static void clampTileToSequences(::fa::AttentionSpec &spec, AttentionOp op) {
  int64_t queryLen = op.getQuery().getType().getDimSize(2);
  int64_t keyLen = op.getKey().getType().getDimSize(2);
  if (!ShapedType::isDynamic(queryLen))
    spec.blockM = clampBlockToSequence(spec.blockM, queryLen);
  if (!ShapedType::isDynamic(keyLen))
    spec.blockN = clampBlockToSequence(spec.blockN, keyLen);
}

/// The one fa.attention of `module` in a func.func; else an error.
static AttentionOp singleAttention(ModuleOp module, std::string &error) {
  SmallVector<AttentionOp> ops;
  module.walk([&](AttentionOp op) { ops.push_back(op); });
  if (ops.size() != 1) {
    error = "expected exactly one fa.attention in the input, found " +
            std::to_string(ops.size());
    return AttentionOp();
  }
  if (!ops.front()->getParentOfType<func::FuncOp>()) {
    error = "fa.attention must be inside a func.func (its name names the kernel)";
    return AttentionOp();
  }
  return ops.front();
}

bool mlir::fa::compileBackwardModule(MLIRContext &context, ModuleOp module,
                                     const std::string &target,
                                     CompiledKernel &out, std::string &error,
                                     bool &badInput) {
  auto start = std::chrono::steady_clock::now();
  badInput = true;
  AttentionOp op = singleAttention(module, error);
  if (!op)
    return false;
  auto func = op->getParentOfType<func::FuncOp>();
  std::string name = ::fa::abi::backwardKernelNameOf(func.getSymName().str());
  if (std::string reason = unsupportedKernelName(name, /*backward=*/true);
      !reason.empty()) {
    error = "kernel name " + reason;
    return false;
  }
  if (op.getBlockSparseAttr()) {
    error = "the GPU backward does not take a block mask (block_sparse) yet";
    return false;
  }
  if (op.getAlibiSlopes()) {
    error = "the backward of an input .mlir takes ALiBi as a score_mod, not "
            "alibi(...)";
    return false;
  }
  ::fa::AttentionSpec spec = specOfAttention(op);
  if (spec.dtype == ::fa::ElementType::F8E4M3FN) {
    error = "f8e4m3fn has no backward";
    return false;
  }
  std::unique_ptr<AttentionGPUStrategy> strategy = createAttentionStrategy(target);
  if (!strategy) {
    error = checkAttentionKernel(target, AttentionKernelConfig());
    return false;
  }
  // The chip's tuned backward tile, within static sequence lengths
  // (fa-recompute-backward's rule).
  applyTunedBackwardTile(spec, target);
  clampTileToSequences(spec, op);
  if (!::fa::checkSpec(spec, error) || !::fa::checkBackwardSpec(spec, error))
    return false;
  ::fa::Variant variant;
  if (!variantOf(op, variant, error))
    return false;
  AttentionKernelConfig config = configOfSpec(
      context, spec, 2,
      strategy->backwardWarpsFor(spec.blockM, spec.blockN, spec.headDim,
                                 spec.valueDim));
  config.captures = llvm::to_vector(op.getCaptures().getTypes());
  error = resolveSchedule(*strategy, config, KernelKind::Backward);
  if (error.empty())
    error = strategy->unsupportedBackwardReason(config);
  if (!error.empty())
    return false;
  badInput = false;
  // fa.attention_grad with the forward's operands, attributes, captures
  // and regions (what autograd would emit), in a function of its own.
  OpBuilder b(&context);
  Location loc = op.getLoc();
  OwningOpRef<ModuleOp> grad = ModuleOp::create(loc);
  b.setInsertionPointToEnd(grad->getBody());
  Type q = op.getQuery().getType(), k = op.getKey().getType(),
       v = op.getValue().getType(), o = op.getOutput().getType();
  auto query = cast<RankedTensorType>(q);
  Type lse = RankedTensorType::get(query.getShape().drop_back(), b.getF32Type());
  SmallVector<Type> inputs = {q, k, v, o, o, lse};
  llvm::append_range(inputs, op.getCaptures().getTypes());
  auto gradFunc = func::FuncOp::create(b, loc, name,
                                       b.getFunctionType(inputs, {q, k, v}));
  Block *entry = gradFunc.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ValueRange args = entry->getArguments();
  auto gradOp = AttentionGradOp::create(
      b, loc, TypeRange{q, k, v}, args[0], args[1], args[2], args[3], args[4],
      args[5], /*alibi_slopes=*/Value(), args.drop_front(6),
      op.getMaskAttr(), op.getScaleAttr(), op.getSoftcapAttr(),
      TileAttr::get(&context, spec.blockM, spec.blockN, config.stages,
                    config.warps, scheduleAttrOf(&context, {})),
      BlockSparseAttr());
  IRMapping mapping;
  op.getScoreMod().cloneInto(&gradOp.getScoreMod(), mapping);
  op.getMaskMod().cloneInto(&gradOp.getMaskMod(), mapping);
  func::ReturnOp::create(b, loc, gradOp.getResults());
  if (failed(verify(*grad))) {
    error = "the backward of " + func.getSymName().str() + " does not verify";
    return false;
  }
  if (!lowerToPTX(context, *grad, target, spec.blockM, spec.blockN, out.ptx,
                  error, /*sharedMemoryBudgetKB=*/0))
    return false;
  out.name = name;
  out.manifest = backwardManifestText(name, spec, target, config, *strategy,
                                      /*omitRowDot=*/false, variant);
  out.seconds = secondsSince(start);
  return true;
}

bool mlir::fa::compileForwardModule(MLIRContext &context, ModuleOp module,
                                    const std::string &target,
                                    CompiledKernel &out, std::string &error,
                                    bool &badInput) {
  auto start = std::chrono::steady_clock::now();
  badInput = true;
  AttentionOp op = singleAttention(module, error);
  if (!op)
    return false;
  auto func = op->getParentOfType<func::FuncOp>();
  ::fa::AttentionSpec spec = specOfAttention(op);
  int64_t stages = 2, warps = 4; // fa-tile's defaults without a #fa.tile
  ScheduleOverrides schedule;
  if (TileAttr tile = op.getTileAttr()) {
    spec.blockM = tile.getBlockM();
    spec.blockN = tile.getBlockN();
    stages = tile.getStages();
    warps = tile.getWarps();
    schedule = scheduleOverridesOf(tile.getSchedule());
  } else if (std::unique_ptr<AttentionGPUStrategy> strategy =
                 createAttentionStrategy(target)) {
    // Without a #fa.tile: the chip's tuned tile, as for a spec, within the
    // static sequence lengths (fa-tile's rule, below), then its pipeline.
    applyTunedTile(spec, target);
    clampTileToSequences(spec, op);
    AttentionGPUStrategy::Pipeline pipeline = strategy->forwardPipeline(
        spec.blockM, spec.blockN, spec.headDim, spec.valueDim,
        spec.dtype == ::fa::ElementType::F8E4M3FN);
    stages = pipeline.stages;
    warps = pipeline.warps;
    op.setTileAttr(TileAttr::get(&context, spec.blockM, spec.blockN, stages,
                                 warps, scheduleAttrOf(&context, {})));
  }
  // fa-tile shrinks the blocks for a static M or N below them, and caps
  // them at a block mask's blocks (its rules).
  clampTileToSequences(spec, op);
  BlockSparseAttr blockSparse = op.getBlockSparseAttr();
  if (blockSparse) {
    spec.blockM = std::min(spec.blockM, blockSparse.getQBlock());
    spec.blockN = std::min(spec.blockN, blockSparse.getKvBlock());
  }
  // The function's name becomes the PTX entry's: LLVM aborts on any other.
  if (std::string reason = unsupportedKernelName(func.getSymName());
      !reason.empty()) {
    error = "function name " + reason;
    return false;
  }
  if (!::fa::checkSpec(spec, error))
    return false;
  // The regions as written: the manifest states them for the reference.
  ::fa::Variant variant;
  if (!variantOf(op, variant, error))
    return false;
  AttentionKernelConfig config = configOfSpec(context, spec, stages, warps);
  config.captures = llvm::to_vector(op.getCaptures().getTypes());
  config.keyBand = analyzeMaskModKeyBand(op.getMaskMod());
  if (blockSparse) {
    config.sparseQBlock = blockSparse.getQBlock();
    config.sparseKvBlock = blockSparse.getKvBlock();
  }
  config.scheduleOverrides = schedule;
  if (std::unique_ptr<AttentionGPUStrategy> strategy =
          createAttentionStrategy(target))
    error = resolveSchedule(*strategy, config, KernelKind::Forward);
  if (error.empty())
    error = checkAttentionKernel(target, config);
  if (!error.empty())
    return false;
  badInput = false;
  out.name = func.getSymName().str();
  returnLse(op, func);
  if (!lowerToPTX(context, module, target, spec.blockM, spec.blockN, out.ptx,
                  error, /*sharedMemoryBudgetKB=*/0))
    return false;
  out.manifest = describeKernel(out.name, spec, target, config, variant);
  out.seconds = secondsSince(start);
  return true;
}
