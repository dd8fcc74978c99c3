# Twenty-third session, call 5: e4m3 D128 with every k-th score exp2 on
# the FMA pipe (polynomialExp2; scratch/s23/poly/k{3,4,8}) against all on
# the SFU (k0 = b9742c3): verify, then ncu cycles (two rounds) and --bench.
set -o pipefail; export PYTHONUNBUFFERED=1; F=build-gpu/bin/fa-run; W=scratch/s23/poly
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
start=$SECONDS
for k in 4 8 3; do for m in none causal; do f=$W/k$k/fa_fwd_sm90a_f8E4M3FN_d128_$m.json
  sizes="1x1 113x203 128x217 1023x1024 4096x4096 1400x300"; [ $k = 4 ] || sizes="113x203 1400x300"
  for size in $sizes; do mm=${size%x*}; nn=${size#*x}
    echo "--kernel $f --b 2 --hq 4 --hkv 4 --m $mm --n $nn --layout bhsd"
    echo "--kernel $f --b 2 --hq 8 --hkv 2 --m $mm --n $nn --layout bshd"
  done; done; done | FA_PARALLEL=16 FA_JOB_TIMEOUT=120 timeout 150 bash bench/verify-parallel.sh $F "verify"
$F --device cuda --kernel $W/k4/fa_fwd_sm90a_f8E4M3FN_d128_none.json --b 2 --hq 4 --hkv 4 --m 1023 --n 1024 --verify 2>&1 | grep -E "^  (O|LSE)"
echo "   ($((SECONDS - start)) s)"
for round in 1 2; do for m in none causal; do for k in 0 4 8 3; do
  r=$(timeout 40 ncu --metrics sm__cycles_elapsed.max -k regex:fa_fwd --launch-skip 2 --launch-count 1 $F --device cuda --kernel $W/k$k/fa_fwd_sm90a_f8E4M3FN_d128_$m.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 3 2>&1 | grep -E '^\s+sm__' | awk '{print $NF}')
  echo "ncu $round $m k$k $r"; done; done; echo "   ($((SECONDS - start)) s)"; done
for m in none causal; do for k in 0 4 8 3; do
  echo "bench $m k$k $(timeout 30 $F --device cuda --kernel $W/k$k/fa_fwd_sm90a_f8E4M3FN_d128_$m.json --b 4 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"; done; done
echo "done ($((SECONDS - start)) s)"
