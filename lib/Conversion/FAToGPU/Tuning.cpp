//===- Tuning.cpp - schedule knobs: names, values, overrides --------------===//
//
// Part of fa-mlir.
//
// The chip-neutral half of Tuning.h: how a knob is written and read, and
// the resolution of a kernel's knobs (the chip's tuned ones, then the
// overrides the build names). Each chip's own knobs and their defaults
// are in its Tuning.cpp.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/Tuning.h"

#include "fa/Conversion/FAToGPU/AttentionKernel.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <sstream>

using namespace mlir;
using namespace mlir::fa;

ScheduleOverrides mlir::fa::scheduleOverridesOf(DictionaryAttr schedule) {
  ScheduleOverrides overrides;
  if (!schedule)
    return overrides;
  for (NamedAttribute knob : schedule) {
    std::string value;
    if (auto flag = dyn_cast<BoolAttr>(knob.getValue()))
      value = flag.getValue() ? "true" : "false";
    else if (auto number = dyn_cast<IntegerAttr>(knob.getValue()))
      value = std::to_string(number.getValue().getSExtValue());
    else if (auto text = dyn_cast<StringAttr>(knob.getValue()))
      value = text.str();
    overrides.emplace_back(knob.getName().str(), value);
  }
  return overrides;
}

DictionaryAttr mlir::fa::scheduleAttrOf(MLIRContext *context,
                                        const ScheduleOverrides &overrides) {
  if (overrides.empty())
    return DictionaryAttr();
  Builder b(context);
  SmallVector<NamedAttribute> knobs;
  for (const auto &[name, value] : overrides) {
    StringRef text(value);
    int64_t number;
    Attribute attr;
    if (text == "true" || text == "false")
      attr = b.getBoolAttr(text == "true");
    else if (!text.getAsInteger(10, number))
      attr = b.getI64IntegerAttr(number);
    else
      attr = b.getStringAttr(text);
    knobs.push_back(b.getNamedAttr(name, attr));
  }
  return b.getDictionaryAttr(knobs);
}

bool mlir::fa::parseScheduleOverrides(StringRef text, ScheduleOverrides &out,
                                      std::string &error) {
  SmallVector<StringRef> items;
  text.split(items, ',');
  for (StringRef item : items) {
    auto [name, value] = item.split('=');
    name = name.trim();
    value = value.trim();
    if (name.empty() || value.empty() || !item.contains('=')) {
      error = "a schedule is name=value[,name=value...], got '" + text.str() + "'";
      return false;
    }
    out.emplace_back(name.str(), value.str());
  }
  return true;
}

namespace {
/// The knobs of `list` that mean something for `c`.
SmallVector<const ScheduleKnob *> knobsFor(ArrayRef<ScheduleKnob> list,
                                           const AttentionKernelConfig &c) {
  SmallVector<const ScheduleKnob *> knobs;
  for (const ScheduleKnob &k : list)
    if (!k.onlyFor || !k.onlyFor(c))
      knobs.push_back(&k);
  return knobs;
}

std::string namesOf(ArrayRef<ScheduleKnob> list) {
  std::string names;
  for (const ScheduleKnob &k : list)
    names += (names.empty() ? "" : ", ") + k.name.str();
  return names.empty() ? "none" : names;
}

const char *kindName(KernelKind kind) {
  return kind == KernelKind::Forward ? "forward" : "backward";
}

/// A non-negative decimal integer without sign or spaces.
bool parseCount(StringRef text, int64_t &out) {
  return !text.empty() && llvm::all_of(text, llvm::isDigit) && text.size() <= 9 &&
         !text.getAsInteger(10, out);
}
} // namespace

std::string mlir::fa::scheduleJson(ArrayRef<ScheduleKnob> list,
                                   const ScheduleKnobs &knobs,
                                   const AttentionKernelConfig &c) {
  std::ostringstream os;
  os << "{";
  bool first = true;
  for (const ScheduleKnob *k : knobsFor(list, c)) {
    os << (first ? "" : ", ") << "\"" << k->name.str() << "\": ";
    first = false;
    std::string value = k->print(knobs);
    if (k->json == ScheduleKnob::Json::String)
      os << "\"" << value << "\"";
    else
      os << value;
  }
  os << "}";
  return os.str();
}

std::string mlir::fa::scheduleText(ArrayRef<ScheduleKnob> list,
                                   const ScheduleKnobs &knobs,
                                   const AttentionKernelConfig &c) {
  std::string text;
  for (const ScheduleKnob *k : knobsFor(list, c))
    text += (text.empty() ? "" : ",") + k->name.str() + "=" + k->print(knobs);
  return text;
}

ScheduleKnob knob::sectionMiB() {
  return {"section_mib", "an integer from 1 to 4096 (MiB)",
          ScheduleKnob::Json::Number,
          [](const ScheduleKnobs &k) { return std::to_string(k.sectionMiB); },
          [](StringRef text, ScheduleKnobs &k) {
            int64_t mib;
            if (!parseCount(text, mib) || mib < 1 || mib > 4096)
              return false;
            k.sectionMiB = mib;
            return true;
          }};
}

ScheduleKnob knob::tileOrder() {
  return {"tile_order", "per_block, strided or paired", ScheduleKnob::Json::String,
          [](const ScheduleKnobs &k) {
            switch (k.tileOrder) {
            case TileOrder::PerBlock:
              return std::string("per_block");
            case TileOrder::Strided:
              return std::string("strided");
            case TileOrder::Paired:
              return std::string("paired");
            }
            return std::string("per_block");
          },
          [](StringRef text, ScheduleKnobs &k) {
            if (text == "per_block")
              k.tileOrder = TileOrder::PerBlock;
            else if (text == "strided")
              k.tileOrder = TileOrder::Strided;
            else if (text == "paired")
              k.tileOrder = TileOrder::Paired;
            else
              return false;
            return true;
          }};
}

ScheduleKnob knob::outputStaging() {
  return {"output_staging", "registers, shared or staging",
          ScheduleKnob::Json::String,
          [](const ScheduleKnobs &k) {
            switch (k.outputStaging) {
            case OutputPlacement::Registers:
              return std::string("registers");
            case OutputPlacement::Shared:
              return std::string("shared");
            case OutputPlacement::Staging:
              return std::string("staging");
            }
            return std::string("registers");
          },
          [](StringRef text, ScheduleKnobs &k) {
            if (text == "registers")
              k.outputStaging = OutputPlacement::Registers;
            else if (text == "shared")
              k.outputStaging = OutputPlacement::Shared;
            else if (text == "staging")
              k.outputStaging = OutputPlacement::Staging;
            else
              return false;
            return true;
          }};
}

ScheduleKnob knob::registerBudget() {
  return {"register_budget",
          "producer/consumer registers per thread, multiples of 8 from 24 to 256",
          ScheduleKnob::Json::String,
          [](const ScheduleKnobs &k) {
            return std::to_string(k.registerBudget.producer) + "/" +
                   std::to_string(k.registerBudget.consumer);
          },
          [](StringRef text, ScheduleKnobs &k) {
            auto [producerText, consumerText] = text.split('/');
            int64_t producer, consumer;
            if (!parseCount(producerText, producer) ||
                !parseCount(consumerText, consumer))
              return false;
            // setmaxnreg's range.
            for (int64_t count : {producer, consumer})
              if (count < 24 || count > 256 || count % 8)
                return false;
            k.registerBudget = {producer, consumer};
            return true;
          }};
}

ScheduleKnob knob::columnGroups() {
  return {"column_groups",
          "QxK or QxKxG: the column groups of S's, dK's and dQ's fragments",
          ScheduleKnob::Json::String,
          [](const ScheduleKnobs &k) {
            const BackwardColumnGroups &g = k.columnGroups;
            std::string text =
                std::to_string(g.queryRows) + "x" + std::to_string(g.keyRows);
            if (g.gradQuery)
              text += "x" + std::to_string(g.gradQuery);
            return text;
          },
          [](StringRef text, ScheduleKnobs &k) {
            SmallVector<StringRef> parts;
            text.split(parts, 'x');
            if (parts.size() != 2 && parts.size() != 3)
              return false;
            int64_t groups[3] = {0, 0, 0};
            for (auto [i, part] : llvm::enumerate(parts))
              if (!parseCount(part, groups[i]) || groups[i] < 1 || groups[i] > 8)
                return false;
            k.columnGroups = {groups[0], groups[1], groups[2]};
            return true;
          }};
}

std::string mlir::fa::resolveSchedule(const AttentionGPUStrategy &strategy,
                                      AttentionKernelConfig &c, KernelKind kind) {
  c.schedule = strategy.tunedSchedule(c, kind);
  if (c.scheduleOverrides.empty())
    return "";
  ArrayRef<ScheduleKnob> list = strategy.scheduleKnobs(kind);
  KernelKind other =
      kind == KernelKind::Forward ? KernelKind::Backward : KernelKind::Forward;
  std::string kernel = (strategy.chip() + " " + kindName(kind)).str();
  llvm::StringSet<> seen;
  for (const auto &[name, value] : c.scheduleOverrides) {
    auto quoted = "'" + name + "'";
    if (!seen.insert(name).second)
      return "schedule knob " + quoted + " is given twice";
    const ScheduleKnob *k = llvm::find_if(
        list, [&](const ScheduleKnob &k) { return k.name == name; });
    if (k == list.end()) {
      if (name == "stages" || name == "warps" || name == "block_m" ||
          name == "block_n")
        return quoted + " is the tile's, not a schedule knob (#fa.tile's " +
               name + ")";
      if (llvm::any_of(strategy.scheduleKnobs(other),
                       [&](const ScheduleKnob &k) { return k.name == name; }))
        return "schedule knob " + quoted + " tunes the " +
               strategy.chip().str() + " " + kindName(other) + ", not the " +
               kindName(kind);
      return "unknown schedule knob " + quoted + " (the " + kernel + "'s: " +
             namesOf(list) + ")";
    }
    if (const char *only = k->onlyFor ? k->onlyFor(c) : nullptr)
      return "schedule knob " + quoted + " is for " + only + " only";
    if (!k->parse(value, c.schedule))
      return "schedule knob " + quoted + " takes " + k->values.str() +
             ", got '" + value + "'";
  }
  return strategy.unsupportedSchedule(c, kind);
}
