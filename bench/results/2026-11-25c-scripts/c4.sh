set -o pipefail
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; D=bench/backward-kernels
echo "== sm90a backward verify (113x203 1023x1024; MHA bhsd, GQA bshd) + negative control"
FA_BWD_SIZES="113x203 1023x1024" timeout 260 bash bench/verify-backward.sh --steps 2 sm90a 2>&1 | cut -c1-400
echo "== D64 causal 128x128 backward verify"
for s in "1 1" "113 203" "1023 1024"; do set -- $s
 timeout 60 $F --device cuda --kernel kernels_generated/fa_fwd_sm90a_bf16_d64_causal.json --bwd-kernel scratch/d64t128/d64_causal_bwd.json --bwd --b 2 --hq 8 --hkv 2 --layout bshd --m $1 --n $2 --seed 3 --verify 2>&1 | grep -E "verdict|FAIL" | tr '\n' ' '; echo " ($s)"; done
echo "== deterministic, sm90a bf16 d128 causal"
timeout 60 $F --device cuda --kernel $D/fa_fwd_sm90a_bf16_d128_causal.json --bwd-kernel $D/fa_bwd_sm90a_bf16_d128_causal_det.json --bwd --deterministic --verify --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd 2>&1 | grep -E "^deterministic|verdict"
echo "== forward verify, the rest (113x203 GQA bshd, 1023x1024 MHA bhsd)"
n=0; bad=0; start=$SECONDS
for k in kernels_generated/fa_fwd_sm80_*.json bench/feature-kernels/fa_fwd_*.json; do
 [ $((SECONDS-start)) -gt 120 ] && { echo "forward verify: time cap reached at $k"; break; }
 for a in "--m 113 --n 203 --hq 8 --hkv 2 --layout bshd" "--m 1023 --n 1024 --hq 4 --hkv 4 --layout bhsd"; do n=$((n+1))
   timeout 60 $F --device cuda --kernel $k --b 2 $a --seed $n --verify > /tmp/v.log 2>&1 || { bad=$((bad+1)); echo "FAIL $k $a"; tail -3 /tmp/v.log; }
 done; done
echo "forward verify: $((n-bad)) of $n passed"
