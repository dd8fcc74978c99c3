//===- StrategyRegistry.cpp - the chips fa-mlir can target ----------------===//
//
// Part of fa-mlir.
//
// The one list of chips. fa-compile --target, the passes' chip option and
// every diagnostic that names the supported chips read it.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/AttentionKernel.h"

#include "Ampere/AmpereStrategy.h"
#include "Hopper/HopperStrategy.h"

using namespace mlir;
using namespace mlir::fa;

namespace {
struct RegisteredStrategy {
  const char *chip;
  std::unique_ptr<AttentionGPUStrategy> (*create)();
};
} // namespace

static const RegisteredStrategy kStrategies[] = {
    {"sm_80", ampere::createAmpereStrategy},
    {"sm_90a", hopper::createHopperStrategy},
};

std::unique_ptr<AttentionGPUStrategy>
mlir::fa::createAttentionStrategy(StringRef chip) {
  for (const RegisteredStrategy &s : kStrategies)
    if (chip == s.chip)
      return s.create();
  return nullptr;
}

std::string mlir::fa::registeredChips() {
  std::string list;
  for (const RegisteredStrategy &s : kStrategies)
    list += (list.empty() ? "" : ", ") + std::string(s.chip);
  return list;
}

StringRef mlir::fa::defaultChip() { return kStrategies[0].chip; }
