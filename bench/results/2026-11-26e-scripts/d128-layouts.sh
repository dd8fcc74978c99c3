# Call 4 (2026-11-26e): D128 warp layouts again, now that dQ's REDs are
# coalesced (a48c904): S at 32 x 32 per warp and dQ_i at 32 x 32
# ({4, 2}: FA2's ldmatrix count, 144 a step against 168) and {4, 1},
# built with the FA_EXP_LAYOUT override (scratch/b10l), against the
# committed {2, 2} (scratch/b10f). The ninth session measured {4, 2} 1.2%
# slower while the REDs were the bound. Verify, then forward + backward
# B4 H16 N4k in the same rounds as SDPA.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26e-scripts/d128-layouts.sh 2>&1 | tee $OUT/log", carry=["scratch/b10f", "scratch/b10l"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; B=scratch/b10f; start=$SECONDS
{ for k in scratch/b10l/l4*/fa_bwd_*.json; do b=$(basename $k .json); f=$B/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    for s in "--b 2 --hq 4 --hkv 4 --m 113 --n 203" "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd" "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; do
      echo "--kernel $f --bwd-kernel $k $x $s"; done; done; } > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 300 bash bench/verify-parallel.sh $F "layouts verify" < /tmp/jobs
for r in 1 2; do for k in sm80_bf16_d128_none sm80_bf16_d128_causal; do
  echo "-- $k round $r"; timeout 120 python3 bench/bwd_variants.py $L $B/fa_fwd_$k.json l22=$B/fa_bwd_$k.json l42=scratch/b10l/l42/fa_bwd_$k.json \
    l41=scratch/b10l/l41/fa_bwd_$k.json l22@det=$B/fa_bwd_${k}_det.json l42@det=scratch/b10l/l42/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
