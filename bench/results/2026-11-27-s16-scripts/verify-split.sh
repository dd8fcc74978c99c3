# Sixteenth session, call 4: the Hopper consumers' loop split at the
# unmasked tiles (no mask branch in the steady-state loop). Verify every
# sm_90a forward (bf16/f16 standard set, sm_90a feature kernels incl. both
# windows with a left edge, the fp8 set), sanitize, time base (HEAD's PTX,
# scratch/rs/base) against new (kernels_generated/) in one process.
set -o pipefail; export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
{ for k in kernels_generated/fa_fwd_sm90a_{bf16,f16}_*.json bench/feature-kernels/fa_fwd_sm90a_*.json; do
  spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    echo "--kernel $k --spec \"$spec\" --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
    echo "--kernel $k --spec \"$spec\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"
  done; done
  for k in kernels_generated/fa_fwd_sm90a_f8E4M3FN_*.json bench/fp8-kernels/*.json; do
  spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    echo "--kernel $k --spec \"$spec,descale=tensor\" --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
    echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"
  done; done; } > /tmp/jobs
wc -l < /tmp/jobs
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 300 bash bench/verify-parallel.sh $F "split verify" < /tmp/jobs
# negative controls: the unmasked range one tile too wide (diagonal tile
# run without its mask; a window's left-edge tile too) must be caught
for k in scratch/s16/neg/*.json; do for size in 1023x1024 4096x4096; do
  $F --device cuda --kernel $k --b 1 --hq 2 --hkv 2 --m ${size%x*} --n ${size#*x} --verify > /tmp/neg.log 2>&1
  echo "negative control $(basename $k) $size: rc=$? $(grep -o 'verdict: [A-Z]*' /tmp/neg.log)"; done; done
echo "   ($((SECONDS - start)) s)"
for k in bench/feature-kernels/fa_fwd_sm90a_bf16_d128_win256_0.json bench/feature-kernels/fa_fwd_sm90a_bf16_d96_win64_16_cap_alibi.json kernels_generated/fa_fwd_sm90a_bf16_d128_causal.json kernels_generated/fa_fwd_sm90a_f8E4M3FN_d128_none.json; do for tool in memcheck racecheck synccheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $k --b 1 --hq 2 --hkv 2 --m 377 --n 1031 --layout bshd --verify > /tmp/san.log 2>&1
  echo "  $tool $(basename $k): rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for ptx in kernels_generated/fa_fwd_sm90a_bf16_d128_none.ptx kernels_generated/fa_fwd_sm90a_f8E4M3FN_d128_none.ptx; do
  ptxas -arch=sm_90a $ptx -o /tmp/x.cubin && python3 scratch/rs/sass_order.py /tmp/x.cubin | grep -o 'B G1[0-9].*' | cut -c1-160
  cuobjdump -sass /tmp/x.cubin | grep -c 'LDL\|STL' ; done
for r in 1 2; do for k in bf16_d128_none bf16_d128_causal bf16_d64_none bf16_d256_none f8E4M3FN_d128_none f8E4M3FN_d256_none f8E4M3FN_d128_causal; do
  [ $r = 2 ] && [ $k = f8E4M3FN_d128_causal ] && continue
  for v in scratch/rs/base kernels_generated; do
  echo "$r $k $v $($F --device cuda --kernel $v/fa_fwd_sm90a_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"; done
