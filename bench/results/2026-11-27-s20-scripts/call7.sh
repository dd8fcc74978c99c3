# Twentieth session, call 7: LSE/D prefetch issued after the body's barrier
# (among the transposed MMAs, FA2's place; l1) against e85bd85's at the
# step's head (w1): D256 none, one round.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s20; F=build-gpu/bin/fa-run; start=$SECONDS
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
for m in none causal; do for sz in "113 203 --hq 8 --hkv 2 --layout bshd" "1023 1024 --hq 4 --hkv 4"; do set -- $sz
  echo "l1 $m $1x$2: $(timeout 60 $F --device cuda --kernel $W/base/fa_fwd_sm80_bf16_d256_$m.json --bwd-kernel $W/l1/fa_bwd_sm80_bf16_d256_$m.json --bwd --b 2 --m $1 --n $2 ${@:3} --verify 2>&1 | grep -c 'verdict: PASS')" &
done; done; wait; echo "($((SECONDS - start)) s)"
k=sm80_bf16_d256_none
timeout 150 python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so $W/base/fa_fwd_$k.json w1=$W/w1/fa_bwd_$k.json l1=$W/l1/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---'
echo "($((SECONDS - start)) s)"
