# Twenty-third session, call 3: the e4m3 D256 fix for tiles with no KV
# tiles (O from registers, no output-empty arrival; the issuer's wait
# counts staged tiles only; no sync before a staged write). Every fp8
# kernel verified (now also at M > N), sanitizers on D256 (also at a size
# where blocks take several tiles, some with no keys), then ncu cycles and
# --bench against 466594f's D256 (scratch/s23/old).
set -o pipefail; export PYTHONUNBUFFERED=1; F=build-gpu/bin/fa-run
start=$SECONDS
FA_FP8_SAN_KERNELS="d256" bash bench/verify-fp8.sh --steps 23 2>&1 | grep -vE "^\s+(O|LSE) " | head -60
echo "   ($((SECONDS - start)) s)"
for k in kernels_generated/fa_fwd_sm90a_f8E4M3FN_d256_causal bench/fp8-kernels/fa_fwd_sm90a_f8E4M3FN_d256_win256_0; do
  for tool in synccheck racecheck memcheck; do
    echo "$tool $(basename $k) b2 hq16 m700 n300: $(timeout 150 compute-sanitizer --tool $tool $F --device cuda --kernel $k.json --b 2 --hq 16 --hkv 4 --m 700 --n 300 --layout bshd --verify 2>&1 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|verdict' | tr '\n' ' ')"
  done; done
K=kernels_generated/fa_fwd_sm90a_f8E4M3FN_d256_causal.json
for i in 1 2 3 4 5 6; do for mn in 1x2048 300x2048 1400x2048 3000x700; do m=${mn%x*}; n=${mn#*x}
  $F --device cuda --kernel $K --b 8 --hq 16 --hkv 4 --m $m --n $n --layout bshd --seed $i$m --verify 2>&1 | grep -q "verdict: PASS" || echo "FAIL causal m=$m n=$n seed $i$m"
done; done; echo "many-tile causal runs done ($((SECONDS - start)) s)"
for round in 1 2; do for m in none causal; do for v in old new; do
  d=kernels_generated; [ $v = old ] && d=scratch/s23/old
  r=$(timeout 60 ncu --metrics sm__cycles_elapsed.max -k regex:fa_fwd --launch-skip 2 --launch-count 1 $F --device cuda --kernel $d/fa_fwd_sm90a_f8E4M3FN_d256_$m.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 3 2>&1 | grep -E '^\s+sm__' | awk '{print $NF}')
  echo "ncu $round $m $v $r"; done; done; done
for m in none causal; do for v in old new; do
  d=kernels_generated; [ $v = old ] && d=scratch/s23/old
  echo "bench $m $v $(timeout 40 $F --device cuda --kernel $d/fa_fwd_sm90a_f8E4M3FN_d256_$m.json --b 4 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"; done; done
echo "done ($((SECONDS - start)) s)"
