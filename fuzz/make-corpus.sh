#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets from the repository's own inputs:
#   mlir:     every .mlir under test/ and examples/, split at `// -----`
#   manifest: kernels_generated/*.json
#   spec:     the spec strings of test/ and unittests/ ("d=64,mask=causal"),
#             and the "spec" of every manifest
# plus the hand-written seeds of fuzz/seeds/<target>/. Files are named by
# their content's hash, so reruns are idempotent.
# Usage: bash fuzz/make-corpus.sh [out-dir]   (default build-fuzz/corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-build-fuzz/corpus}"
mkdir -p "$OUT/mlir" "$OUT/manifest" "$OUT/spec"

python3 - "$OUT" <<'PY'
import hashlib, json, pathlib, re, sys

out = pathlib.Path(sys.argv[1])
root = pathlib.Path(".")
counts = {}

def add(target, data):
    if isinstance(data, str):
        data = data.encode()
    if not data.strip():
        return
    name = hashlib.sha1(data).hexdigest()[:16]
    path = out / target / name
    if not path.exists():
        path.write_bytes(data)
        counts[target] = counts.get(target, 0) + 1

# MLIR: the lit inputs and the examples, one seed per split-input-file chunk.
for f in sorted(list(root.glob("test/**/*.mlir")) + list(root.glob("examples/*.mlir"))):
    for chunk in re.split(r"^// -----.*$", f.read_text(), flags=re.M):
        add("mlir", chunk)

# Manifests: the committed kernels' JSON, and their spec strings.
for f in sorted(root.glob("kernels_generated/*.json")):
    text = f.read_text()
    add("manifest", text)
    try:
        add("spec", json.loads(text).get("spec", ""))
    except ValueError:
        pass

# Spec strings quoted in the tests: "d=64,dtype=f16,mask=causal".
spec = re.compile(r'"((?:d|dv|dtype|mask|softcap|alibi|scale|block_m|block_n)=[^"\n]*)"')
for pattern in ("test/**/*.test", "test/**/*.py", "unittests/**/*.cpp",
                "tools/**/*.cpp", "bench/**/*.sh", "bench/**/*.py"):
    for f in sorted(root.glob(pattern)):
        for m in spec.finditer(f.read_text(errors="replace")):
            add("spec", m.group(1))

# Hand-written seeds.
for target in ("mlir", "manifest", "spec"):
    for f in sorted((root / "fuzz" / "seeds" / target).glob("*")):
        if f.is_file():
            add(target, f.read_bytes())

for target in ("mlir", "manifest", "spec"):
    total = len(list((out / target).iterdir()))
    print(f"corpus {target}: {total} files ({counts.get(target, 0)} new) in {out / target}")
PY
