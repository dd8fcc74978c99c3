set -o pipefail
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; D=bench/backward-kernels
echo "== sm90a backward verify (1x1 113x203 128x217 1023x1024; MHA bhsd, GQA bshd)"
FA_BWD_SIZES="1x1 113x203 128x217 1023x1024" timeout 200 bash bench/verify-backward.sh --steps 2 sm90a 2>&1 | grep -v "^  fa_" 
echo "== 4096 backward, one each"
for k in sm90a_bf16_d128_none sm90a_bf16_d256_causal sm90a_bf16_d64_causal; do
  timeout 60 $F --device cuda --kernel $D/fa_fwd_$k.json --bwd --b 1 --hq 1 --hkv 1 --m 4096 --n 4096 --seed 7 --verify 2>&1 | grep -c PASS | sed "s/^/$k PASS lines: /"; done
echo "== forward verify, every fwd kernel (1x1 113x203 1023x1024; MHA bhsd, GQA bshd)"
n=0; bad=0; start=$SECONDS
for k in kernels_generated/fa_fwd_sm90a_{bf16,f16}_*.json kernels_generated/fa_fwd_sm80_*.json bench/feature-kernels/fa_fwd_*.json; do
 [ $((SECONDS-start)) -gt 170 ] && { echo "forward verify: time cap reached"; break; }
 for s in "1 1" "113 203" "1023 1024"; do
  for h in "--hq 4 --hkv 4 --layout bhsd" "--hq 8 --hkv 2 --layout bshd"; do set -- $s; n=$((n+1))
   timeout 60 $F --device cuda --kernel $k --b 2 $h --m $1 --n $2 --seed $n --verify > /tmp/v.log 2>&1 || { bad=$((bad+1)); echo "FAIL $k $s $h"; tail -3 /tmp/v.log; }
 done; done; done
echo "forward verify: $((n-bad)) of $n passed"
echo "== sanitizers, backward"
for k in sm90a_bf16_d128_causal sm90a_bf16_d256_none sm80_bf16_d128_causal; do
 for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $D/fa_fwd_$k.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/s.log 2>&1; echo "$tool $k rc=$? $(grep -E 'ERROR SUMMARY' /tmp/s.log)"
 done; done
echo "== sanitizers, forward"
for k in sm90a_bf16_d256_causal sm80_bf16_d128_none; do
 for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel kernels_generated/fa_fwd_$k.json --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/s.log 2>&1; echo "$tool $k rc=$? $(grep -E 'ERROR SUMMARY' /tmp/s.log)"
 done; done
