# Call 6 (thirteenth session): fp8 causal with the persistent paired tile
# order (the bf16 kernels' TileOrder::Paired; e4m3 used one tile per
# block), generated with a temporary FA_PAIRED override into scratch/x,
# against the committed kernels. Verify, then fa-run --bench alternating.
set -o pipefail; W=scratch/x
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run
{ for k in $W/fp8_*paired.json; do for s in "--b 2 --hq 4 --hkv 2 --m 113 --n 203" "--b 1 --hq 4 --hkv 2 --m 1023 --n 1024 --layout bshd" "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096" "--b 3 --hq 2 --hkv 2 --m 700 --n 500"; do echo "--kernel $k $s"; done; done; } > /tmp/jobs
FA_PARALLEL=8 FA_JOB_TIMEOUT=200 timeout 300 bash bench/verify-parallel.sh $F "paired verify" < /tmp/jobs
for r in 1 2; do for n in 4096 16384; do b=$((4 * 8192 / n)); for k in fa_fwd_sm90a_f8E4M3FN_d128_causal fp8_d128_causal_paired fa_fwd_sm90a_f8E4M3FN_d256_causal fp8_d256_causal_paired; do
  echo "$r N=$n $k $($F --device cuda --kernel $W/$k.json --b $b --hq 16 --hkv 16 --m $n --n $n --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"; done; done; done
