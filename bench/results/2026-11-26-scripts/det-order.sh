# Call 6 (2026-11-26): the deterministic turns under a mask in decreasing
# KV-block order, the KV blocks launched last first (scratch/det-new),
# against the previous increasing order (scratch/det-old) and the default
# kernels: verify (bit-identical over 10 runs), then fwd+bwd time.
# Device: run(command="bash bench/results/2026-11-26-scripts/det-order.sh 2>&1 | tee $OUT/log",
#             carry=["bench/backward-kernels", "scratch"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name --format=csv,noheader)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; N=scratch/det-new; O=scratch/det-old; D=bench/backward-kernels
ks="sm90a_bf16_d64_causal sm90a_bf16_d128_causal sm90a_bf16_d256_causal sm80_bf16_d64_causal sm80_bf16_d128_causal"
for k in $ks; do for a in "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd" "--b 2 --hq 4 --hkv 4 --m 113 --n 203" "--b 1 --hq 4 --hkv 2 --m 640 --n 200 --layout bshd" "--b 1 --hq 2 --hkv 2 --m 300 --n 300"; do
  ( out=$(timeout 100 $F --device cuda --kernel $N/fa_fwd_$k.json --bwd-kernel $N/fa_bwd_${k}_det.json --bwd --deterministic --verify $a 2>&1)
    echo "  $k ($a): rc=$? $(echo "$out" | grep -E '^deterministic|verdict' | tr '\n' ' ')" ) &
done; done; wait
echo "== fwd+bwd B4 H16 N4k: default, deterministic (old order), deterministic (new order)"
for k in sm90a_bf16_d128_causal sm90a_bf16_d256_causal sm80_bf16_d128_causal sm90a_bf16_d64_causal; do
  A="--b 4 --hq 16 --hkv 16 --m 4096 --n 4096 --bwd --bench --iters 10"
  echo "  $k default: $(timeout 60 $F --device cuda --kernel $N/fa_fwd_$k.json $A 2>&1 | grep -iE 'forward\+backward' | grep -o '[0-9.]* TFLOP/s')"
  echo "  $k det old: $(timeout 60 $F --device cuda --kernel $N/fa_fwd_$k.json --bwd-kernel $O/fa_bwd_${k}_det.json --deterministic $A 2>&1 | grep -iE 'forward\+backward' | grep -o '[0-9.]* TFLOP/s')"
  echo "  $k det new: $(timeout 60 $F --device cuda --kernel $N/fa_fwd_$k.json --bwd-kernel $N/fa_bwd_${k}_det.json --deterministic $A 2>&1 | grep -iE 'forward\+backward' | grep -o '[0-9.]* TFLOP/s')"
done
