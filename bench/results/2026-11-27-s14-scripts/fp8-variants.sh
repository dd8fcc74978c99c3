set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/n
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
for r in 1; do for k in d128_none d128_causal d256_none d256_causal; do for v in base ldsm r24 paired; do
  [ $v = paired ] && [[ $k == *none ]] && continue
  echo "$r $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"; done
{ for k in $W/ldsm/*.json $W/r24/*.json $W/paired/*causal.json; do
  spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    echo "--kernel $k --spec \"$spec,descale=tensor\" --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
    echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"; done; done; } > /tmp/jobs
echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 300 bash bench/verify-parallel.sh $F "fp8 next verify" < /tmp/jobs
for v in ldsm/fa_fwd_sm90a_f8E4M3FN_d128_none ldsm/fa_fwd_sm90a_f8E4M3FN_d256_none r24/fa_fwd_sm90a_f8E4M3FN_d256_none; do for tool in memcheck racecheck synccheck; do k=$W/$v.json
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $k --b 2 --hq 4 --hkv 2 --m 77 --n 131 --layout bshd --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool $v: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 2; do for k in d128_none d128_causal d256_none d256_causal; do for v in base ldsm r24 paired; do
  [ $v = paired ] && [[ $k == *none ]] && continue
  echo "$r $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"; done
