# Call 4 (thirteenth session): the fp8 D128 forward with 2, 3, 4 K/V/Vᵀ
# stages (temporary FA_STAGES override at generation; scratch/st), after
# call 3's ncu: consumers waiting 9% of samples for Vᵀ, the producer 15%
# for V's TMA. Verify, then fa-run --bench B2 H16 N8k, rounds alternating.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/st
nvidia-smi --query-gpu=name --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run
{ for k in $W/fp8_*_s3.json $W/fp8_*_s4.json; do for s in "--b 2 --hq 4 --hkv 2 --m 113 --n 203" "--b 1 --hq 4 --hkv 2 --m 1023 --n 1024 --layout bshd" "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096"; do echo "--kernel $k $s"; done; done; } > /tmp/jobs
FA_PARALLEL=12 FA_JOB_TIMEOUT=200 timeout 300 bash bench/verify-parallel.sh $F "stages verify" < /tmp/jobs
for r in 1 2 3; do for k in fp8_d128_none_s2 fp8_d128_none_s3 fp8_d128_none_s4 fp8_d128_causal_s2 fp8_d128_causal_s3 fp8_d128_causal_s4 bf16_d128_none_s2 bf16_d128_none_s3; do
  echo "$r $k $($F --device cuda --kernel $W/$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"; done; done
