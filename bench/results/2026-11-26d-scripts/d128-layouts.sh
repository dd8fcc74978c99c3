# Call 2 (2026-11-26d): the sm_80 D128 backward (64 x 128, 8 warps) under
# other warp layouts, against f6bca0c's (scratch/new80: S's keys over two
# groups of four warps, each warp 16 keys of dK_j, dV_j; "g21" is the
# same with dQ_i in two column parts). gQK: Q-side fragments (S, dP, dS,
# dQ_i) in Q column groups, key-side (dK_j, dV_j) in K: g42 is FA2's
# layout (S 32 x 32 per warp, dK/dV 32 keys x 64 dims, dQ_i 32 x 32).
# Built with FA_EXP_GROUPS=Q,K (an experiment's override, not committed).
# Quick check first (fa-run --verify at three sizes), then forward +
# backward B4 H16 N4k beside SDPA in the same rounds.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26d-scripts/d128-layouts.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/new80", "scratch/exp"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; N=scratch/new80; E=scratch/exp; start=$SECONDS
sizes() { echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; }
{ for k in $E/*/fa_bwd_*.json $E/*/f16/fa_bwd_*.json; do d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}.json
    sizes | sed "s|^|--kernel $f --bwd-kernel $k --bwd |"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 300 bash bench/verify-parallel.sh $F "layouts verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm80_bf16_d128_none sm80_bf16_d128_causal; do
  echo "-- $k round $r"; timeout 120 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json base=$N/fa_bwd_$k.json g21=$E/g21/fa_bwd_$k.json \
    g42=$E/g42/fa_bwd_$k.json g22=$E/g22/fa_bwd_$k.json g41=$E/g41/fa_bwd_$k.json 2>&1 | grep "^|\|relative"; echo "   ($((SECONDS - start)) s)"; done; done
# D64 (64 x 128, 8 warps, staged dQ_i): g22, dK_j and dV_j 32 keys x 32 dims per warp
for r in 1 2; do for k in sm80_bf16_d64_none sm80_bf16_d64_causal; do
  echo "-- $k round $r"; timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json base=$N/n128/fa_bwd_$k.json g22=$E/g22/fa_bwd_$k.json 2>&1 | grep "^|\|relative"; echo "   ($((SECONDS - start)) s)"; done; done
