#!/bin/bash
# Builds scratch/fa3/fa3_bench: FlashAttention-3's Hopper forward kernels
# (the explicit run_flash_fwd instantiations fa3_*_d{128,256}*.cu) and the host
# driver fa3_bench_main.cu, statically linked with the CUDA runtime, on
# the build machine (no GPU needed; ~1.5-3 min a kernel file, one at a time).
# First: bash bench/fa3/get-sources.sh. Run the binary on the device
# (BENCH.md).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/flags.sh"                 # FA3 (the sources), NVCC, FLAGS
OUT="$FA3/bench_build"
mkdir -p "$OUT"
TUS="fa3_fp8_d128 fa3_bf16_d128_c2 fa3_bf16_d128_c1 fa3_fp8_d256 fa3_bf16_d256_c2 fa3_bf16_d256_c1 fa3_bench_main"
for tu in $TUS; do
  if [ ! -f "$OUT/$tu.o" ] || [ "$HERE/$tu.cu" -nt "$OUT/$tu.o" ] || [ "$HERE/flags.sh" -nt "$OUT/$tu.o" ]; then
    echo "[build] $tu.cu"
    $NVCC $FLAGS -c -o "$OUT/$tu.o" "$HERE/$tu.cu"
  fi
done
$NVCC -gencode arch=compute_90a,code=sm_90a -cudart static -o "$FA3/fa3_bench" \
  $(for tu in $TUS; do echo "$OUT/$tu.o"; done)
ls -l "$FA3/fa3_bench"
