# fp8 softmax experiments (fifteenth session): tree row max / sum, and the
# PV wait fenced behind a branch so ptxas cannot hoist it.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/fp8x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
VS="base fence tree treefence"
for v in $VS; do for p in $W/$v/*.ptx; do ptxas -arch=sm_90a $p -o ${p%.ptx}.cubin; done; done
for v in $VS; do python3 $W/sass_order.py $W/$v/fa_fwd_sm90a_f8E4M3FN_d128_none.cubin $W/$v/fa_fwd_sm90a_bf16_d128_none.cubin | sed 's/^scratch.fp8x.//'; done
python3 $W/sass_order.py $W/base/fa_fwd_sm90a_f8E4M3FN_d256_none.cubin $W/treefence/fa_fwd_sm90a_f8E4M3FN_d256_none.cubin | sed 's/^scratch.fp8x.//'
{ for v in fence tree treefence; do for k in $W/$v/*.json; do
  spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  for size in 1x1 113x203 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    if [[ $k == *f8E4M3FN* ]]; then
      echo "--kernel $k --spec \"$spec,descale=tensor\" --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
      echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"
    else echo "--kernel $k --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"; fi; done; done; done; } > /tmp/jobs
echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "fp8x verify" < /tmp/jobs
for v in treefence/fa_fwd_sm90a_f8E4M3FN_d128_none treefence/fa_fwd_sm90a_f8E4M3FN_d256_causal; do for tool in memcheck racecheck synccheck; do k=$W/$v.json
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $k --b 2 --hq 4 --hkv 2 --m 77 --n 131 --layout bshd --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool $v: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in f8E4M3FN_d128_none f8E4M3FN_d128_causal f8E4M3FN_d256_none f8E4M3FN_d256_causal bf16_d128_none; do for v in $VS; do
  echo "$r $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"; done
