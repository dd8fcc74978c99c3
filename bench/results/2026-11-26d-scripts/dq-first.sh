# Call 9 (2026-11-26d): the sm_80 backward's dQ_i product and its
# additions before dV's and dK's MMAs (Sources::gradQueryFirst; FA2's
# order: its REDs in flight under their MMAs), scratch/dqf/on, against
# 2ccf9f1's order (dV, dK, then dQ_i: scratch/dqf/off). Built with the
# FA_EXP_DQFIRST override. Verify the new kernels, then forward +
# backward B4 H16 N4k beside SDPA in the same rounds.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26d-scripts/dq-first.sh 2>&1 | tee $OUT/log", carry=["scratch/dqf"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; O=scratch/dqf/off; N=scratch/dqf/on; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
{ for k in $N/fa_bwd_*.json; do b=$(basename $k .json); f=$N/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    sizes | sed "s|^|--kernel $f --bwd-kernel $k $x |"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 300 bash bench/verify-parallel.sh $F "dq-first verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $N/fa_fwd_sm80_bf16_d128_causal.json --bwd-kernel $N/fa_bwd_sm80_bf16_d128_causal.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool d128 causal: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done
for r in 1 2; do for k in sm80_bf16_d128_none sm80_bf16_d128_causal sm80_bf16_d64_none sm80_bf16_d64_causal; do
  echo "-- $k round $r"; timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json old=$O/fa_bwd_$k.json first=$N/fa_bwd_$k.json \
    old@det=$O/fa_bwd_${k}_det.json first@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
