#!/usr/bin/env bash
# The fp8 (e4m3) sm_90a forward on the GPU machine:
#   1. build libfa_runtime and fa-run with -DFA_ENABLE_COMPILER=OFF;
#   2. fa-run --verify every fp8 kernel (kernels_generated/ and the carried
#      bench/fp8-kernels/) at the standard verification sizes, MHA [B,H,S,D] and GQA
#      [B,S,H,D], per-tensor and per-head descales; the negative control
#      (V's descale dropped) must fail;
#   3. SASS (HGMMA, spills) and compute-sanitizer on small and odd sizes;
#   4. time fp8 beside the bf16 sm_90a kernel of the same shape (fa-run
#      --bench) at N >= 4k.
# Usage: [FA_FP8_FILTER=text] [FA_FP8_SIZES="1x1 ..."] [FA_PARALLEL=16]
#        [FA_FP8_BENCH_D="128 256"] [FA_FP8_BENCH_N="4096 ..."] [FA_FP8_BENCH_MASKS="none causal"]
#        [FA3_BENCH=scratch/fa3/fa3_bench] bash bench/verify-fp8.sh [--steps 234]
#   FA3_BENCH: step 4 also times FlashAttention-3 (bench/fa3/BENCH.md) at
#   the non-causal shapes.
set -u
command="$(env | grep -E '^(FA3_BENCH|FA_FP8_[A-Z_]+)=' | sort | tr '\n' ' ')bash bench/verify-fp8.sh $*"
steps=1234
if [ "${1:-}" = "--steps" ]; then steps="1$2"; shift 2; fi
want() { [[ "$steps" == *"$1"* ]]; }
cd "$(dirname "$0")/.."
OUT_DIR="${OUT:-/tmp/fa-fp8}"; mkdir -p "$OUT_DIR"
echo "== revision $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "== command: $command"
# The device machine's git HEAD can lag the copied working tree: the
# kernels' own hash says which PTX ran.
# In C collation, so that the hash matches the build machine's.
echo "== kernels_generated/*.ptx sha256 $(LC_ALL=C; cat kernels_generated/*.ptx 2>/dev/null | sha256sum | cut -c1-12)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF \
  -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || { echo "build FAILED"; exit 1; }
FA_RUN=build-gpu/bin/fa-run
kernels=$(ls kernels_generated/fa_fwd_sm90a_f8E4M3FN_*.json bench/fp8-kernels/*.json 2>/dev/null |
          grep -- "${FA_FP8_FILTER:-}")

if want 2; then
echo "== 2. verify (fa-run --verify, side by side: bench/verify-parallel.sh)"
for manifest in $kernels; do
  spec=$(grep -o '"spec": "[^"]*"' "$manifest" | cut -d'"' -f4)
  # The standard sizes, and M > N: bottom-right causal and windowed query
  # tiles with no visible keys (D256 stores their O from registers).
  sizes=${FA_FP8_SIZES:-1x1 113x203 128x217 1023x1024 4096x4096 1400x300}
  # The feature kernels (bench/fp8-kernels/) at fewer sizes.
  [[ "$manifest" == bench/* ]] && sizes=${FA_FP8_FEATURE_SIZES:-1x1 113x203 1023x1024 1400x300}
  for size in $sizes; do
    m=${size%x*}; n=${size#*x}
    echo "--kernel $manifest --spec \"$spec,descale=tensor\" --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
    echo "--kernel $manifest --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"
  done
done | FA_PARALLEL=${FA_PARALLEL:-16} FA_JOB_TIMEOUT=${FA_JOB_TIMEOUT:-240} \
  bash bench/verify-parallel.sh "$FA_RUN" "verify"
for manifest in $(echo "$kernels" | head -2); do
  $FA_RUN --device cuda --kernel "$manifest" --b 1 --hq 2 --hkv 2 --m 300 --n 500 --verify \
    --negative-control no-descale > "$OUT_DIR/neg.log" 2>&1
  rc=$?
  # Caught only if O (what V's descale scales) is the mismatch.
  if [ $rc -eq 1 ] && grep -q "^  O .*FAIL" "$OUT_DIR/neg.log"; then
    echo "  negative control (no-descale) caught: $(basename $manifest .json), exit $rc"
  else
    echo "NEGATIVE CONTROL NOT CAUGHT: $(basename $manifest) (exit $rc)"
  fi
  grep -E "^  (O|LSE) " "$OUT_DIR/neg.log"
done
fi

if want 3; then
echo "== 3. SASS and sanitizers"
mkdir -p build-gpu/sass
for manifest in $kernels; do
  ptx=${manifest%.json}.ptx; cubin=build-gpu/sass/$(basename $ptx .ptx).cubin
  ptxas -arch=sm_90a -v "$ptx" -o "$cubin" 2> build-gpu/sass/ptxas.txt
  cuobjdump --dump-sass "$cubin" > build-gpu/sass/sass.txt
  printf "  %-44s GMMA %3d  LDL %3d  STL %3d  PRMT %4d  %s\n" "$(basename $ptx .ptx)" \
    "$(grep -c -E 'HGMMA|QGMMA' build-gpu/sass/sass.txt)" "$(grep -c 'LDL' build-gpu/sass/sass.txt)" \
    "$(grep -c 'STL' build-gpu/sass/sass.txt)" "$(grep -c 'PRMT' build-gpu/sass/sass.txt)" \
    "$(grep -o 'Used [0-9]* registers' build-gpu/sass/ptxas.txt)"
done
for manifest in $(echo "$kernels" | grep -E "${FA_FP8_SAN_KERNELS:-d(128|256)_(none|causal)\.json|win|d96}"); do
  for tool in memcheck racecheck synccheck; do
    for size in ${FA_FP8_SAN_SIZES:-"--b_1_--hq_1_--hkv_1_--m_64_--n_128" "--b_2_--hq_4_--hkv_2_--m_77_--n_131_--layout_bshd"}; do
      size=${size//_/ }
      if compute-sanitizer --tool $tool --error-exitcode 3 $FA_RUN --device cuda --kernel "$manifest" $size --verify \
           > "$OUT_DIR/san.log" 2>&1; then r=clean; else r="FAILED"; tail -6 "$OUT_DIR/san.log"; fi
      echo "  $tool $(basename $manifest .json) ${size// /}: $r"
    done
  done
done
fi

if want 4; then
echo "== 4. speed: fp8 vs the bf16 sm_90a kernel (fa-run --bench, B=4 H=16)"
for d in ${FA_FP8_BENCH_D:-128 256}; do
  for mask in ${FA_FP8_BENCH_MASKS:-none causal}; do
    for n in ${FA_FP8_BENCH_N:-4096 8192 16384}; do
      b=$((4 * 8192 / n)); [ $b -lt 1 ] && b=1
      for dtype in f8E4M3FN bf16; do
        k=kernels_generated/fa_fwd_sm90a_${dtype}_d${d}_${mask}.json
        t=$($FA_RUN --device cuda --kernel $k --b $b --hq 16 --hkv 16 --m $n --n $n --bench --iters 30 2>&1 |
            grep -o '[0-9.]* TFLOP/s' | head -1)
        printf "  d%-4s %-7s N=%-6s B=%-2s %-9s %s\n" $d $mask $n $b $dtype "$t"
      done
      # FlashAttention-3 on the same card and shape (bench/fa3/: its own
      # binary, so its own process; non-causal only).
      if [ -n "${FA3_BENCH:-}" ] && [ $mask = none ]; then
        for dtype in e4m3 bf16; do
          t=$("$FA3_BENCH" --dtype $dtype --d $d --b $b --h 16 --n $n | grep -o '[0-9.]* TFLOP/s' | head -1)
          printf "  d%-4s %-7s N=%-6s B=%-2s %-9s %s\n" $d $mask $n $b "fa3-$dtype" "$t"
        done
      fi
    done
  done
done
fi
