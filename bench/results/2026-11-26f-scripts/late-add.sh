# Call 2 (2026-11-26f): the deterministic sm_80 backward adds dQ_i a step
# late (carried to the next step, added after its first barrier; thread 0
# takes the turn at the step's end: no barrier of its own). Kernels:
# scratch/s11old (HEAD), scratch/s12new (late), scratch/s12new4 (late, on the
# default's four-group layout: FA_EXP_DET4), scratch/s12f (feature kernels).
# "late" without @det: the deterministic kernel launched without the mode.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26f-scripts/late-add.sh 2>&1 | tee $OUT/log", carry=[scratch/s11old, scratch/s12new, scratch/s12new4, scratch/s12f])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; O=scratch/s11old; N=scratch/s12new; N4=scratch/s12new4; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"; echo "--b 2 --hq 4 --hkv 2 --m 100 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
{ for k in $N/fa_bwd_sm80_*_det.json $N4/fa_bwd_sm80_*_det.json scratch/s12f/fa_bwd_*.json; do
    d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    sizes | sed "s|^|--kernel $f --bwd-kernel $k --bwd --deterministic |"; done
  for k in $N/fa_bwd_sm80_*_det.json; do b=$(basename $k .json); f=$N/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    sizes | head -5 | sed "s|^|--kernel $f --bwd-kernel $k --bwd |"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 400 bash bench/verify-parallel.sh $F "late-add verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for tool in memcheck racecheck synccheck; do for k in sm80_bf16_d64_none sm80_bf16_d128_causal; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $N/fa_fwd_$k.json --bwd-kernel $N/fa_bwd_${k}_det.json --bwd --deterministic --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool $k det: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do
  for k in sm80_bf16_d64_none sm80_bf16_d64_causal sm80_bf16_d128_none sm80_bf16_d128_causal; do
    echo "-- $k round $r"; timeout 120 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json def=$O/fa_bwd_$k.json \
      old@det=$O/fa_bwd_${k}_det.json late@det=$N/fa_bwd_${k}_det.json late=$N/fa_bwd_${k}_det.json late4@det=$N4/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
done
