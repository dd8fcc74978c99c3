# Call 6 (2026-11-26e): D64 with dQ_i in a warp layout of its own
# (BackwardColumnGroups::gradQuery): S and dP at 32 x 32 a warp (S's keys
# over four groups), dQ_i at 16 rows x 32 dims (two groups): 88 ldmatrix
# a step against 96. Built with the FA_EXP_D64=422 override
# (scratch/b10d/v422), against the committed {2, 2} (scratch/b10g).
# Verify, then forward + backward B4 H16 N4k beside SDPA.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26e-scripts/d64-own-dq.sh 2>&1 | tee $OUT/log", carry=["scratch/b10g", "scratch/b10d"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; B=scratch/b10g; V=scratch/b10d/v422; start=$SECONDS
{ for k in $V/fa_bwd_*.json; do b=$(basename $k .json); f=$B/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    for s in "--b 1 --hq 1 --hkv 1 --m 1 --n 1" "--b 2 --hq 4 --hkv 4 --m 113 --n 203" "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd" "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; do
      echo "--kernel $f --bwd-kernel $k $x $s"; done; done; } > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 300 bash bench/verify-parallel.sh $F "d64 own-dQ verify" < /tmp/jobs
for r in 1 2; do for k in sm80_bf16_d64_none sm80_bf16_d64_causal; do
  echo "-- $k round $r"; timeout 120 python3 bench/bwd_variants.py $L $B/fa_fwd_$k.json l22=$B/fa_bwd_$k.json l422=$V/fa_bwd_$k.json \
    l22@det=$B/fa_bwd_${k}_det.json l422@det=$V/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
