#!/bin/bash
# Extracts FlashAttention-3's Hopper sources and the CUTLASS it pins into
# scratch/fa3 (git-ignored), from git directories (a bare clone, or a
# clone's .git) of
# https://github.com/Dao-AILab/flash-attention and https://github.com/NVIDIA/cutlass.
# Usage: bash bench/fa3/get-sources.sh FA_GIT_DIR CUTLASS_GIT_DIR
set -euo pipefail
FA_GIT="${1:?usage: get-sources.sh FA_GIT_DIR CUTLASS_GIT_DIR}"
CUTLASS_GIT="${2:?usage: get-sources.sh FA_GIT_DIR CUTLASS_GIT_DIR}"
FA_COMMIT=0251105a2fb19d2957484b7f023cd8c115286ced      # 2026-08-15
CUTLASS_COMMIT=7127592069c2fe01b041e174ba4345ef9b279671 # FA3's csrc/cutlass pin
OUT="$(cd "$(dirname "$0")/../.." && pwd)/scratch/fa3"
mkdir -p "$OUT/fa" "$OUT/cutlass"
git --git-dir="$FA_GIT" archive "$FA_COMMIT" hopper | tar -x -C "$OUT/fa"
git --git-dir="$CUTLASS_GIT" archive "$CUTLASS_COMMIT" include tools/util/include | tar -x -C "$OUT/cutlass"
echo "sources in $OUT (fa/hopper, cutlass/include)"
