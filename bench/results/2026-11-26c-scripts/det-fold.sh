# Call 9 (2026-11-26c): the sm_80 deterministic kernels with the fence of
# the previous Q block's additions before the barrier that follows dQ_i's
# staging (one barrier a step fewer; scratch/fold) against HEAD's
# (scratch/accRun, ace6478): verify with --deterministic (bit-identical over
# 10 runs), then forward + backward B4 H16 N4k beside the default and SDPA.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26c-scripts/det-fold.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/fold", "scratch/accRun"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; A=scratch/accRun; N=scratch/fold; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
for k in $N/fa_bwd_*d64*_det.json $N/fa_bwd_*d96*_det.json; do b=$(basename $k .json); f=$N/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
  [ -f $f ] || f=$A/$(basename $f)
  sizes | sed "s|^|--kernel $f --bwd-kernel $k --bwd --deterministic |"; done > /tmp/jobs
FA_PARALLEL=16 FA_JOB_TIMEOUT=150 timeout 200 bash bench/verify-parallel.sh $F "sm_80 det verify" < /tmp/jobs
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $A/fa_fwd_sm80_bf16_d64_causal.json --bwd-kernel $N/fa_bwd_sm80_bf16_d64_causal_det.json --deterministic --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool sm80 d64 causal det: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done
echo "   ($((SECONDS - start)) s)"
for k in sm80_bf16_d64_none sm80_bf16_d64_causal; do
  echo "-- $k"; timeout 80 python3 bench/bwd_variants.py $L $A/fa_fwd_$k.json default=$A/fa_bwd_$k.json head@det=$A/fa_bwd_${k}_det.json \
    fold@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
