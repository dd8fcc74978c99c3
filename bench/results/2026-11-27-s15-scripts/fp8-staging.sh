# fp8 (fifteenth session): staging slots released by the producer's own
# transpose (dec), and 128 x 224 / 128 x 192 tiles at D128 on it.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/fp8y
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
for v in dec n224; do for p in $W/$v/*none.ptx; do ptxas -arch=sm_90a $p -o ${p%.ptx}.cubin; cuobjdump -sass ${p%.ptx}.cubin | grep -c "LDL\|STL" | sed "s|^|$p local memory instructions: |"; done; done
python3 $W/sass_order.py $W/n224/fa_fwd_sm90a_f8E4M3FN_d128_none.cubin | cut -c1-400
{ for k in $W/dec/*.json $W/n224/*.json $W/n192/*.json; do
  spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    echo "--kernel $k --spec \"$spec,descale=tensor\" --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
    echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"; done; done; } > /tmp/jobs
echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "fp8y verify" < /tmp/jobs
for v in dec/fa_fwd_sm90a_f8E4M3FN_d256_none n224/fa_fwd_sm90a_f8E4M3FN_d128_none; do for tool in memcheck racecheck synccheck; do k=$W/$v.json
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $k --b 2 --hq 4 --hkv 2 --m 77 --n 531 --layout bshd --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool $v: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for kv in d128_none:base d128_none:dec d128_none:n224 d128_none:n192 d256_none:base d256_none:dec d256_causal:base d256_causal:dec; do k=${kv%:*}; v=${kv#*:}
  echo "$r $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; echo "   ($((SECONDS - start)) s)"; done
