# Seventeenth session, call 9 (device): the deterministic D256 backward
# with two dQ writers taking the steps in turn, each passing its own Q
# block's turn once its reduce-adds complete (plan.gradQueryWriters):
# verify (deterministic launches, bit-identity over 10 runs), sanitizers,
# then HEAD's deterministic kernel against it beside the default kernel.
#   run(carry=["scratch/s17f"], command="bash bench/results/2026-11-27-s17-scripts/call9.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s17f
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
{ for m in causal none; do for size in 1x1 113x203 1023x1024 4096x4096; do
    echo "--kernel $W/new/fa_fwd_sm90a_bf16_d256_$m.json --bwd-kernel $W/new/fa_bwd_sm90a_bf16_d256_${m}_det.json --bwd --deterministic --b 2 --hq 8 --hkv 2 --m ${size%x*} --n ${size#*x} --layout bshd"
    echo "--kernel $W/new/fa_fwd_sm90a_bf16_d256_$m.json --bwd-kernel $W/new/fa_bwd_sm90a_bf16_d256_${m}_det.json --bwd --b 2 --hq 4 --hkv 4 --m ${size%x*} --n ${size#*x} --layout bhsd"
  done; done; } > /tmp/jobs
FA_PARALLEL=12 FA_JOB_TIMEOUT=120 timeout 150 bash bench/verify-parallel.sh $F "two-writer det verify" < /tmp/jobs
$F --device cuda --kernel $W/new/fa_fwd_sm90a_bf16_d256_causal.json --bwd-kernel $W/new/fa_bwd_sm90a_bf16_d256_causal_det.json --bwd --deterministic --verify --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd 2>&1 | grep -E '^deterministic|verdict' | tr '\n' ' '; echo
for tool in racecheck synccheck memcheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $W/new/fa_fwd_sm90a_bf16_d256_causal.json --bwd-kernel $W/new/fa_bwd_sm90a_bf16_d256_causal_det.json --bwd --deterministic --b 1 --hq 2 --hkv 1 --m 77 --n 331 --verify > /tmp/san.log 2>&1
  echo "  $tool: rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done
echo "   ($((SECONDS - start)) s)"
for round in 1 2; do
  python3 bench/bwd_variants.py $L $W/head/fa_fwd_sm90a_bf16_d256_causal.json default=$W/head/fa_bwd_sm90a_bf16_d256_causal.json head@det=$W/head/fa_bwd_sm90a_bf16_d256_causal_det.json new@det=$W/new/fa_bwd_sm90a_bf16_d256_causal_det.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$round causal /"
  echo "   ($((SECONDS - start)) s)"; done
