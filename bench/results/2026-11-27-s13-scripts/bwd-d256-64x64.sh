set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/b64
echo "== $(nvidia-smi --query-gpu=name --format=csv,noheader)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
{ for t in g244 g422 g242; do for m in none causal; do for s in "--b 2 --hq 4 --hkv 2 --m 113 --n 203" "--b 1 --hq 4 --hkv 2 --m 1023 --n 1024 --layout bshd"; do
  echo "--kernel $W/base/fa_fwd_sm80_bf16_d256_$m.json --bwd-kernel $W/$t/fa_bwd_sm80_bf16_d256_$m.json --bwd $s"; done; done; done; } > /tmp/jobs
FA_PARALLEL=12 FA_JOB_TIMEOUT=200 timeout 300 bash bench/verify-parallel.sh $F "b64 verify" < /tmp/jobs
for m in none causal; do echo "-- $m"; timeout 200 python3 bench/bwd_variants.py $L $W/base/fa_fwd_sm80_bf16_d256_$m.json base=$W/base/fa_bwd_sm80_bf16_d256_$m.json g244=$W/g244/fa_bwd_sm80_bf16_d256_$m.json g422=$W/g422/fa_bwd_sm80_bf16_d256_$m.json g242=$W/g242/fa_bwd_sm80_bf16_d256_$m.json 2>&1 | grep "^|"; echo "   ($((SECONDS - start)) s)"; done
