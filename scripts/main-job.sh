#!/usr/bin/env bash
# The main job: take an fa.attention op through fa-mlir.
# Today: parse and verify examples/attention.mlir, print it in custom and
# generic form, and show that a malformed op is rejected with a diagnostic.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
FA_OPT="$BUILD_DIR/bin/fa-opt"

"$FA_OPT" examples/attention.mlir
"$FA_OPT" examples/attention.mlir --mlir-print-op-generic | "$FA_OPT" >/dev/null
echo "round trip (custom -> generic -> custom): OK"
if "$FA_OPT" examples/invalid-attention.mlir >/dev/null 2>/tmp/fa-main-job.err; then
  echo "error: the malformed example was accepted" >&2
  exit 1
fi
echo "malformed example rejected: $(grep -m1 error: /tmp/fa-main-job.err)"
