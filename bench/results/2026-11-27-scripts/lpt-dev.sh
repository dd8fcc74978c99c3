set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; W=scratch/lpt; start=$SECONDS
{ for k in $W/l32/fa_bwd_*.json $W/l16/fa_bwd_*.json $W/l32w/fa_bwd_*.json; do d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}.json
  for s in "--b 2 --hq 4 --hkv 2 --m 113 --n 203" "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd" "--b 3 --hq 16 --hkv 4 --m 2048 --n 2048"; do echo "--kernel $f --bwd-kernel $k --bwd $s"; done; done; } > /tmp/jobs
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 300 bash bench/verify-parallel.sh $F "lpt verify" < /tmp/jobs
for r in 1 2; do for k in sm80_bf16_d128_causal sm80_bf16_d64_causal sm90a_bf16_d128_causal sm90a_bf16_d256_causal sm80_bf16_d256_causal; do
  echo "-- $k round $r"; timeout 200 python3 bench/bwd_variants.py $L $W/base/fa_fwd_$k.json base=$W/base/fa_bwd_$k.json l16=$W/l16/fa_bwd_$k.json l32=$W/l32/fa_bwd_$k.json l64=$W/l64/fa_bwd_$k.json 2>&1 | grep "^|"; echo "   ($((SECONDS - start)) s)"; done; done
