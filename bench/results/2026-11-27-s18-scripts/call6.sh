set -o pipefail; F=build-gpu/bin/fa-run; FA3=scratch/fa3/fa3_bench; W=scratch/v256
[ -x $F ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null; }
for v in base defer split both; do p=$W/$v/fa_fwd_sm90a_f8E4M3FN_d256_none.ptx; ptxas -arch=sm_90a $p -o /tmp/$v.cubin; cuobjdump -sass /tmp/$v.cubin > /tmp/$v.sass
  echo "$v: $(python3 $W/loops.py /tmp/$v.sass | grep 'GMMA 12,' | head -3 | tr '\n' ' ')"; done
{ for v in defer split both; do for m in none causal; do k=$W/$v/fa_fwd_sm90a_f8E4M3FN_d256_$m.json
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do
    echo "--kernel $k --b 2 --hq 4 --hkv 4 --m ${size%x*} --n ${size#*x} --layout bhsd"
    echo "--kernel $k --spec \"$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4),descale=head\" --b 2 --hq 8 --hkv 2 --m ${size%x*} --n ${size#*x} --layout bshd"; done; done; done; } > /tmp/jobs
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 300 bash bench/verify-parallel.sh $F "d256 variants verify" < /tmp/jobs
$F --device cuda --kernel $W/both/fa_fwd_sm90a_f8E4M3FN_d256_none.json --b 1 --hq 2 --hkv 2 --m 300 --n 500 --verify --negative-control no-descale > /tmp/neg.log 2>&1; echo "neg control rc=$? (1 = caught)"
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $F --device cuda --kernel $W/both/fa_fwd_sm90a_f8E4M3FN_d256_none.json --b 1 --hq 2 --hkv 2 --m 300 --n 700 --verify > /tmp/san.log 2>&1; echo "racecheck both: rc=$?"
for round in 1 2 3; do
  for v in base defer split both; do echo "$round none $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_d256_none.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"; done
  echo "$round none $($FA3 --dtype e4m3 --d 256 --b 2 --h 16 --n 8192 | grep '^fa3')"
  for v in base defer; do echo "$round causal $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_d256_causal.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"; done
done
