set -o pipefail; F=build-gpu/bin/fa-run
[ -x $F ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null; }
bash bench/verify-fp8.sh --steps 23 2>&1 | tail -25
{ for k in kernels_generated/fa_fwd_sm90a_bf16_d256_causal.json kernels_generated/fa_fwd_sm90a_f16_d256_causal.json; do
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do
    echo "--kernel $k --b 2 --hq 4 --hkv 4 --m ${size%x*} --n ${size#*x} --layout bhsd"
    echo "--kernel $k --b 2 --hq 8 --hkv 2 --m ${size%x*} --n ${size#*x} --layout bshd"; done; done; } > /tmp/jobs16
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 300 bash bench/verify-parallel.sh $F "sm90a 16-bit d256 causal" < /tmp/jobs16 2>&1 | tail -3
