# fp8 (fifteenth session): the consumers' KV loop unrolled by two, so that
# P_j's registers differ from the in-flight P_{j-1}'s (does ptxas still
# hoist the P.V wait above the softmax?).
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/unroll
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
for v in base unroll; do for p in $W/$v/*.ptx; do ptxas -arch=sm_90a $p -o ${p%.ptx}.cubin; done; python3 $W/sass_order.py $W/$v/*d128_none.cubin | cut -c1-900; done
{ for k in $W/unroll/*.json; do spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  for size in 1x1 113x203 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"; done; done; } > /tmp/jobs
FA_PARALLEL=8 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "unroll verify" < /tmp/jobs
for r in 1 2; do for k in d128_none d256_none; do for v in base unroll; do
  echo "$r $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"; done
