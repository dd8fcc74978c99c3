# Call 8 (2026-11-26d): fa.accumulate_fragment's reductions at the row's
# address plus the column as the immediate (scratch/new80d) against
# 2ccf9f1's address per element (scratch/new80c), for the kernels whose
# PTX changed (sm_80 D128 and D96 backward kernels). Verify (float64
# reference; det kernels with --deterministic, bit-identical over 10
# runs; the D128 negative control), sanitizers, then forward + backward
# B4 H16 N4k beside SDPA in the same rounds.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26d-scripts/red-imm.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/new80c", "scratch/new80d"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; O=scratch/new80c; N=scratch/new80d; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; }
big="--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"
{ for k in $N/fa_bwd_*d128*.json $N/d128f/fa_bwd_*.json $N/d96/fa_bwd_*.json; do d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    sizes | sed "s|^|--kernel $f --bwd-kernel $k $x |"
    case $d in $N) echo "--kernel $f --bwd-kernel $k $x $big";; esac; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 420 bash bench/verify-parallel.sh $F "red-imm verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
$F --device cuda --kernel $N/d128f/neg/fa_fwd_sm80_bf16_d128_none.json --bwd-kernel $N/d128f/neg/fa_bwd_sm80_bf16_d128_none.json --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify 2>&1 | grep -E "dQ|dK|verdict"
echo "negative control D128 (no D term): exit ${PIPESTATUS[0]} (1 = caught)"
for k in "$N/fa_fwd_sm80_bf16_d128_causal.json $N/fa_bwd_sm80_bf16_d128_causal.json" "$N/fa_fwd_sm80_bf16_d128_none.json $N/fa_bwd_sm80_bf16_d128_none_det.json --deterministic"; do
  set -- $k
  for tool in memcheck racecheck synccheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $1 --bwd-kernel $2 $3 --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
    rc=$?; echo "  $tool $(basename $2) $3: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm80_bf16_d128_none sm80_bf16_d128_causal; do
  echo "-- $k round $r"; timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json old=$O/fa_bwd_$k.json imm=$N/fa_bwd_$k.json \
    old@det=$O/fa_bwd_${k}_det.json imm@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
