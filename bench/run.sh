#!/usr/bin/env bash
# The GPU machine's whole job, nothing typed by hand:
#   1. build libfa_runtime and fa-run with -DFA_ENABLE_COMPILER=OFF (no MLIR);
#   2. verify every kernel in kernels_generated/ with fa-run --verify at the
#      issue's sizes, MHA in [B,H,S,D] and GQA in [B,S,H,D];
#   3. read the SASS (HMMA, no local-memory spills) and run compute-sanitizer
#      (memcheck, racecheck, synccheck, initcheck) over every kernel of the
#      set at a small and an odd-sized problem;
#   4. time fa-mlir beside PyTorch SDPA (flash = FA2, cuDNN) in one process.
# Usage: [FA_VERIFY_FILTER=text] [FA_SANITIZERS="memcheck ..."]
#        [FA_SANITIZE_FEATURES=1] bash bench/run.sh [--steps 1234] [--quick]
#   --steps: which of the steps to run (default all; 1, the build, always
#   runs), so that verification and timing can run as separate jobs.
#   --quick: fewer sizes in step 4.          Output: a log and tables on stdout.
set -u
command="$(env | grep -E '^FA_[A-Z_]+=' | sort | tr '\n' ' ')bash bench/run.sh $*"
steps=1234
if [ "${1:-}" = "--steps" ]; then steps="1$2"; shift 2; fi
want() { [[ "$steps" == *"$1"* ]]; }
bench_args=("$@") # step 2 reuses the positional parameters
cd "$(dirname "$0")/.."
OUT_DIR="${OUT:-/tmp/fa-bench}"
mkdir -p "$OUT_DIR"
echo "== revision $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "== command: $command"
# The device machine's git HEAD can lag the copied working tree: the
# kernels' own hash says which PTX ran.
# In C collation, so that the hash matches the build machine's.
echo "== kernels_generated/*.ptx sha256 $(LC_ALL=C; cat kernels_generated/*.ptx 2>/dev/null | sha256sum | cut -c1-12)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

echo "== 1. build (FA_ENABLE_COMPILER=OFF)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF \
  -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || { echo "build FAILED"; exit 1; }
FA_RUN=build-gpu/bin/fa-run

if want 2; then
echo "== 2. verify kernels_generated/ and bench/feature-kernels/ (fa-run --verify)"
# bench/feature-kernels/ (softcap, ALiBi, any head dim, Dv != D) is made by
# bench/make-feature-kernels.sh where the compiler is, and carried here.
fails=0; runs=0
for manifest in kernels_generated/fa_fwd_*.json bench/feature-kernels/*.json; do
  [ -f "$manifest" ] || continue
  name=$(basename "$manifest" .json)
  [[ "$name" == *"${FA_VERIFY_FILTER:-}"* ]] || continue
  # An ALiBi kernel takes [Hq] or [B, Hq] slopes (a stride): verify both
  # (--spec restates the manifest's spec with the slopes' shape).
  slopes="none"; grep -q '"alibi_slopes"' "$manifest" && slopes="head batch_head"
  manifest_spec=$(grep -o '"spec": "[^"]*"' "$manifest" | cut -d'"' -f4)
  for alibi in $slopes; do
    spec=(); [ "$alibi" != none ] && spec=(--spec "${manifest_spec/alibi=head/alibi=$alibi}")
    for size in "1 1" "113 203" "128 217" "1023 1024" "4096 4096"; do
      for heads in "mha bhsd --hq 4 --hkv 4" "gqa bshd --hq 8 --hkv 2"; do
        set -- $size $heads
        m=$1; n=$2; kind=$3; layout=$4; shift 4
        runs=$((runs + 1))
        # A hung kernel (a barrier that never completes) fails, not stalls.
        if ! timeout 120 $FA_RUN --device cuda --kernel "$manifest" "${spec[@]}" --b 2 "$@" --m $m --n $n \
             --layout $layout --seed $runs --verify > "$OUT_DIR/verify.log" 2>&1; then
          fails=$((fails + 1)); echo "FAIL $name $alibi m=$m n=$n $kind $layout"; tail -5 "$OUT_DIR/verify.log"
        fi
      done
    done
  done
  echo "  $name: verified ($(grep -o 'rel_err[^,]*' "$OUT_DIR/verify.log" | head -1))"
done
echo "verify: $((runs - fails)) of $runs runs passed"
fi

if want 3; then
echo "== 3. SASS and sanitizers"
mkdir -p build-gpu/sass
for ptx in kernels_generated/fa_fwd_sm80_bf16_d64_causal.ptx kernels_generated/fa_fwd_sm80_bf16_d128_none.ptx \
           kernels_generated/fa_fwd_sm80_bf16_d256_none.ptx kernels_generated/fa_fwd_sm80_bf16_d96_none.ptx \
           kernels_generated/fa_fwd_sm80_bf16_d128_none_cap.ptx kernels_generated/fa_fwd_sm80_bf16_d128_none_alibi.ptx \
           kernels_generated/fa_fwd_sm90a_bf16_d64_causal.ptx kernels_generated/fa_fwd_sm90a_bf16_d128_none.ptx \
           kernels_generated/fa_fwd_sm90a_bf16_d256_none.ptx; do
  cubin=build-gpu/sass/$(basename $ptx .ptx).cubin
  # sm_80 PTX runs on the H100 as sm_90 SASS; sm_90a PTX needs sm_90a.
  arch=sm_90; [[ "$ptx" == *sm90a* ]] && arch=sm_90a
  ptxas -arch=$arch -v "$ptx" -o "$cubin" 2> build-gpu/sass/ptxas.txt
  cuobjdump --dump-sass "$cubin" > build-gpu/sass/sass.txt
  printf "  %-36s HMMA %4d  HGMMA %3d  LDL %3d  STL %3d  LDSM %4d  LDGSTS %3d  UTMALDG %3d  %s\n" "$(basename $ptx .ptx)" \
    "$(grep -c 'HMMA' build-gpu/sass/sass.txt)" "$(grep -c 'HGMMA' build-gpu/sass/sass.txt)" \
    "$(grep -c 'LDL' build-gpu/sass/sass.txt)" \
    "$(grep -c 'STL' build-gpu/sass/sass.txt)" "$(grep -c 'LDSM' build-gpu/sass/sass.txt)" \
    "$(grep -c 'LDGSTS' build-gpu/sass/sass.txt)" "$(grep -c 'UTMALDG' build-gpu/sass/sass.txt)" \
    "$(grep -o 'Used [0-9]* registers' build-gpu/sass/ptxas.txt)"
  grep -q "C7508\|setmaxnreg.*ignored" build-gpu/sass/ptxas.txt && echo "  WARNING: setmaxnreg ignored"
done
# Every kernel of the set (and, with FA_SANITIZE_FEATURES=1, the feature
# kernels) under the four compute-sanitizer tools, at a small and an
# odd-sized GQA problem. FA_SANITIZERS narrows the tools, FA_VERIFY_FILTER
# the kernels (to split the work over separate jobs).
san_fail=0; san_runs=0
kernels=(kernels_generated/fa_fwd_*.json)
[ "${FA_SANITIZE_FEATURES:-0}" = 1 ] && kernels+=(bench/feature-kernels/*.json)
for kernel in "${kernels[@]}"; do
  [ -f "$kernel" ] || continue
  name=$(basename "$kernel" .json)
  [[ "$name" == *"${FA_VERIFY_FILTER:-}"* ]] || continue
  line="  $(printf '%-40s' "$name")"
  for tool in ${FA_SANITIZERS:-memcheck racecheck synccheck initcheck}; do
    status=clean
    for args in "--b 1 --m 64 --n 64" "--b 2 --m 113 --n 203 --hq 4 --hkv 2 --layout bshd"; do
      san_runs=$((san_runs + 1))
      if ! compute-sanitizer --tool $tool --error-exitcode 9 $FA_RUN --device cuda \
           --kernel "$kernel" $args --verify > "$OUT_DIR/san.log" 2>&1; then
        status=ERRORS; san_fail=$((san_fail + 1))
        echo "  compute-sanitizer $tool $name ($args): ERRORS"; tail -20 "$OUT_DIR/san.log"
      fi
    done
    line="$line $tool:$status"
  done
  echo "$line"
done
echo "sanitizers: $((san_runs - san_fail)) of $san_runs runs clean"

fi

want 4 || exit 0
echo "== 4. speed: fa-mlir vs PyTorch SDPA (flash = FA2, cuDNN), bf16 forward, TFLOP/s"
python3 bench/bench.py build-gpu/runtime/libfa_runtime.so kernels_generated --baseline bench/baseline/sm80-fwd-0fa98a2 "${bench_args[@]}"
