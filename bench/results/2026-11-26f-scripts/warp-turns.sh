# Call 1 (2026-11-26f): the deterministic sm_80 backward with per-warp turns
# (GradQueryAdder: each warp's lane 0 takes its dQ_i band's turn, no block
# barrier), and the sm_90a D256 rings reordered (dO first with one Q stage;
# dQ_i parts awaited before their staging waits). Kernels: scratch/s11old
# (HEAD), scratch/s11new (this change), scratch/s11new4 (deterministic on the
# default's four-group layout, FA_EXP_DET4), scratch/s11f (feature kernels).
# Verify, bit-identical, then forward + backward B4 H16 N4k beside SDPA.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26f-scripts/warp-turns.sh 2>&1 | tee $OUT/log", carry=[scratch/s11old, scratch/s11new, scratch/s11new4, scratch/s11f])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; O=scratch/s11old; N=scratch/s11new; N4=scratch/s11new4; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"; echo "--b 2 --hq 4 --hkv 2 --m 100 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
{ for k in $N/fa_bwd_sm80_*_det.json $N4/fa_bwd_sm80_*_det.json $N/fa_bwd_sm90a_*d256*.json scratch/s11f/fa_bwd_*.json; do
    d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json; [ -f $f ] || f=$N/$(basename $f)
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    sizes | sed "s|^|--kernel $f --bwd-kernel $k $x |"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 400 bash bench/verify-parallel.sh $F "warp-turn verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for tool in memcheck racecheck synccheck; do for k in sm80_bf16_d64_none sm80_bf16_d128_causal; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $N/fa_fwd_$k.json --bwd-kernel $N/fa_bwd_${k}_det.json --bwd --deterministic --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool $k det: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do
  for k in sm80_bf16_d64_none sm80_bf16_d64_causal sm80_bf16_d128_none sm80_bf16_d128_causal; do
    echo "-- $k round $r"; timeout 120 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json def=$N/fa_bwd_$k.json \
      old@det=$O/fa_bwd_${k}_det.json new@det=$N/fa_bwd_${k}_det.json new4@det=$N4/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
  for k in sm90a_bf16_d256_none sm90a_bf16_d256_causal; do
    echo "-- $k round $r"; timeout 120 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json old=$O/fa_bwd_$k.json new=$N/fa_bwd_$k.json \
      old@det=$O/fa_bwd_${k}_det.json new@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
done
