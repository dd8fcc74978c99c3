set -o pipefail; export PYTHONUNBUFFERED=1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; O=scratch/pre-zero; N=kernels_generated; D=bench/backward-kernels
echo "== verify: sm90a 16-bit forwards (1x1, 113x203 GQA bshd, 1023x1024 MHA bhsd)"
n=0; bad=0
for k in $N/fa_fwd_sm90a_{bf16,f16}_*.json bench/feature-kernels/fa_fwd_sm90a_*.json; do
 for a in "--m 1 --n 1 --hq 4 --hkv 4 --layout bhsd" "--m 113 --n 203 --hq 8 --hkv 2 --layout bshd" "--m 1023 --n 1024 --hq 4 --hkv 4 --layout bhsd"; do n=$((n+1))
   timeout 60 $F --device cuda --kernel $k --b 2 $a --seed $n --verify > /tmp/v.log 2>&1 || { bad=$((bad+1)); echo "FAIL $k $a"; tail -3 /tmp/v.log; }
 done; done; echo "forward verify: $((n-bad)) of $n passed"
echo "== verify: fp8"; FA_FP8_SIZES="113x203 1023x1024" FA_FP8_FEATURE_SIZES="113x203" timeout 90 bash bench/verify-fp8.sh --steps 2 2>&1 | grep -E "FAIL|verified|passed|negative" | head
echo "== verify: sm90a backward pairs (113x203 GQA bshd, 1023x1024 MHA bhsd)"
n=0; bad=0
for k in $D/fa_fwd_sm90a_*.json; do
 for a in "--m 113 --n 203 --b 2 --hq 8 --hkv 2 --layout bshd" "--m 1023 --n 1024 --b 1 --hq 4 --hkv 4 --layout bhsd"; do n=$((n+1))
  timeout 60 $F --device cuda --kernel $k --bwd $a --seed $n --verify > /tmp/l 2>&1 || { bad=$((bad+1)); echo "FAIL $k $a"; tail -4 /tmp/l; }
 done; done; echo "backward verify: $((n-bad)) of $n passed"
neg=$D/negative-sm90a/fa_bwd_sm90a_bf16_d64_none.json
$F --device cuda --kernel $D/fa_fwd_sm90a_bf16_d64_none.json --bwd-kernel $neg --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify >/tmp/n 2>&1; echo "negative control rc=$? (1 = caught)"
for tool in memcheck racecheck synccheck; do timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $D/fa_fwd_sm90a_bf16_d128_causal.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify >/tmp/s 2>&1; echo "$tool bwd d128 causal rc=$?"; done
echo "== backward timing: pre-zero vs zero-acc, 2 rounds"
A="--bwd --bench --iters 20 --b 4 --hq 16 --hkv 16 --m 4096 --n 4096"
t() { echo "$1: $($F --device cuda --kernel $2 --bwd-kernel $3 $A 2>&1 | grep -iE 'tflop' | tr '\n' ' ' | sed 's/over 20 iterations (1 input sets)//g')"; }
for r in 1 2; do for k in sm90a_bf16_d64_none sm90a_bf16_d64_causal sm90a_bf16_d128_none sm90a_bf16_d128_causal sm90a_bf16_d256_none sm90a_bf16_d256_causal; do
  t "r$r old $k" $N/fa_fwd_$k.json $O/fa_bwd_$k.json; t "r$r new $k" $N/fa_fwd_$k.json $N/fa_bwd_$k.json; done; done
echo "== forward timing"
V="timeout 80 python3 bench/variants.py build-gpu/runtime/libfa_runtime.so"
$V 2048,8192 old=$O/fa_fwd_sm90a_bf16_d128_none.json new=$N/fa_fwd_sm90a_bf16_d128_none.json
$V 2048,8192 old=$O/fa_fwd_sm90a_bf16_d64_causal.json new=$N/fa_fwd_sm90a_bf16_d64_causal.json
$V 8192 old=$O/fa_fwd_sm90a_bf16_d256_none.json new=$N/fa_fwd_sm90a_bf16_d256_none.json
