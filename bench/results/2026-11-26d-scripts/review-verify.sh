# Call 10 (2026-11-26d): after the review's refactor (the step's turn built
# once at the step's start; GradQueryTurn::awaitPeeked without a callback),
# the sm_80 masked deterministic kernels' PTX moved (register numbering,
# the turn's arithmetic earlier): verify them (scratch/rev80) with
# --deterministic, bit-identical over 10 runs, and time D64 causal against
# 2ccf9f1's (scratch/new80c) in the same rounds.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26d-scripts/review-verify.sh 2>&1 | tee $OUT/log", carry=["scratch/rev80", "scratch/new80c"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; N=scratch/rev80; O=scratch/new80c; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
{ for k in $N/fa_bwd_*_det.json $N/n128/fa_bwd_*_det.json $N/d128f/fa_bwd_*_det.json; do d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    sizes | sed "s|^|--kernel $f --bwd-kernel $k --bwd --deterministic |"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 400 bash bench/verify-parallel.sh $F "review verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for k in sm80_bf16_d64_causal sm80_bf16_d128_causal; do
  echo "-- $k"; timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json default=$N/fa_bwd_$k.json \
    before@det=$O/fa_bwd_${k}_det.json after@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; done
