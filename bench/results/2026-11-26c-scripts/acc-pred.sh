# Call 11 (2026-11-26c): the unrolled dQ_i addition with each RED predicated instead of branched (scratch/pred) against HEAD's (scratch/accRun), after call 10's ncu (REDG waiting on its LDS: 18% of the D64 stall samples); as call 8 otherwise. (Call 8: the staged dQ_i addition (fa.accumulate_shared,
# the sm_80 D64 backward) unrolled, one column per thread, one 64-bit add
# per row (scratch/accRun) against HEAD's loop (scratch/loopRun, c050608)
# and main's atom loop (scratch/mainStd, c065b0f): verify (the D64 sm_80
# backward kernels of bench/backward-kernels, the deterministic ones with
# --deterministic, the negative control), then forward + backward B4 H16
# N4k beside SDPA in the same rounds.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26c-scripts/acc-pred.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/pred", "scratch/accRun", "bench/backward-kernels"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; K=bench/backward-kernels; A=scratch/pred; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
{ for k in $K/fa_bwd_sm80_*d64*.json; do f=$K/$(basename ${k/fa_bwd_/fa_fwd_}); f=${f/_det.json/.json}
    case $k in *_det.json) sizes | sed "s|^|--kernel $f --bwd-kernel $k --bwd --deterministic |";; *) sizes | sed "s|^|--kernel $f --bwd-kernel $k --bwd |";; esac; done
  sizes | sed "s|^|--kernel $A/fa_fwd_sm80_bf16_d64_win100_50.json --bwd-kernel $A/fa_bwd_sm80_bf16_d64_win100_50_det.json --bwd --deterministic |"
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 300 bash bench/verify-parallel.sh $F "D64 sm_80 verify" < /tmp/jobs
$F --device cuda --kernel $K/negative/fa_fwd_sm80_bf16_d64_none.json --bwd-kernel $K/negative/fa_bwd_sm80_bf16_d64_none.json --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1
echo "negative control sm_80 D64 (no D term): exit $? (1 = caught)"
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $A/fa_fwd_sm80_bf16_d64_causal.json --bwd-kernel $A/fa_bwd_sm80_bf16_d64_causal.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool sm80 d64 causal: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm80_bf16_d64_none sm80_bf16_d64_causal; do
  echo "-- $k round $r"; timeout 80 python3 bench/bwd_variants.py $L $A/fa_fwd_$k.json unrolled=scratch/accRun/fa_bwd_$k.json \
    pred=$A/fa_bwd_$k.json unrolled@det=scratch/accRun/fa_bwd_${k}_det.json pred@det=$A/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
