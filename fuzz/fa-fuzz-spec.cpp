//===- fa-fuzz-spec.cpp - libFuzzer target: spec strings ------------------===//
//
// Part of fa-mlir.
//
// Feeds the bytes to fa::parseSpec, the parser behind fa-run --spec,
// fa-compile --spec and the manifests' "spec" field. An accepted spec is then
// checked against a few problem sizes, including degenerate and
// overflow-prone ones, with validateProblem, and its derived values (mask
// name, scale, ALiBi shape) are computed. Any outcome but a crash or a
// sanitizer report is fine: a bad spec must be refused with a reason. The
// C API's parser (fa_spec_parse, what the Python package calls) must read
// back what its printer writes, field for field.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Spec.h"
#include "fa/runtime/fa_runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

/// Problem sizes to check an accepted spec against: ordinary, odd-sized,
/// zero and negative lengths, and products that wrap around 2^64.
static const fa::ProblemSize kSizes[] = {
    {1, 1, 1, 1, 1},
    {2, 4, 2, 127, 129},
    {1, 8, 1, 4096, 1},
    {1, 1, 1, 0, 0},
    {-1, 1, 1, 1, 1},
    {1, 3, 2, 16, 16},
    {int64_t(1) << 32, int64_t(1) << 32, int64_t(1) << 32, 1, 1},
    {1, 1, 1, std::numeric_limits<int64_t>::max(),
     std::numeric_limits<int64_t>::max()},
};

/// A valid spec's fa_spec_format text parses back to the same fa_spec (== per field:
/// a softcap of -0 prints as none and reads back as +0).
static void checkCRoundTrip(const std::string &text) {
  fa_spec spec;
  // fa_spec_format refuses (-1) what fa_spec_check refuses: text that
  // parses but states sizes out of range has nothing to round-trip.
  if (fa_spec_parse(text.c_str(), &spec) != 0 || fa_spec_check(&spec) != 0)
    return;
  char printed[512];
  int64_t length = fa_spec_format(&spec, printed, sizeof(printed));
  fa_spec back;
  if (length < 0 || length >= int64_t(sizeof(printed)) ||
      fa_spec_parse(printed, &back) != 0)
    std::abort();
  if (spec.head_dim != back.head_dim || spec.value_dim != back.value_dim ||
      spec.dtype != back.dtype || spec.mask != back.mask ||
      spec.window_left != back.window_left ||
      spec.window_right != back.window_right || spec.scale != back.scale ||
      spec.softcap != back.softcap || spec.alibi != back.alibi ||
      spec.descale != back.descale || spec.block_m != back.block_m ||
      spec.block_n != back.block_n)
    std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return -1; // Specs are short; longer inputs only slow the search down.
  std::string text(reinterpret_cast<const char *>(data), size);
  checkCRoundTrip(text);
  fa::AttentionSpec spec;
  std::string error;
  if (!fa::parseSpec(text, spec, error))
    return 0;
  (void)fa::maskName(spec.mask);
  (void)fa::alibiName(spec.alibi);
  (void)spec.scaleOrDefault();
  for (const fa::ProblemSize &problem : kSizes) {
    std::string reason;
    if (!fa::validateProblem(spec, problem, reason))
      continue;
    (void)fa::alibiShape(spec, problem);
  }
  return 0;
}
