# For the next session (written 2026-11-27, fifteenth session; compiled and
# ptxas-checked, not run on a GPU): FA3's order in the sm_90a pipelined
# body — the accumulator rescaled by the previous tile's factor right
# before that tile's P·V is issued (rescale-before-pv.diff), so the
# softmax never touches O while P·V is in flight. Hypothesis (perf-notes,
# fifteenth session): ptxas hoists the P·V wait to the top of the softmax
# because the 64 O-rescale FMULs (which only need the row max) are
# scheduled among the exponentials; without them in the softmax the wait
# may stay after it and a warpgroup's softmax overlap its own P·V.
#   gen (build machine, clean lib/include/test):
#     bash bench/results/2026-11-27-s15-scripts/next-rescale.sh gen
#   device: run(carry=["scratch/rs"], command="bash bench/results/2026-11-27-s15-scripts/next-rescale.sh 2>&1 | tee $OUT/log")
# The diff updates sm90a.mlir and pack-carried-subwords.mlir (the
# loop carries the factor: one more vector<2xf32>); if it pays: apply,
# fa-compile --standard-set, make-fp8-kernels.sh, verify, land.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/rs
S=bench/results/2026-11-27-s15-scripts
KS="f8E4M3FN_d128_none f8E4M3FN_d128_causal f8E4M3FN_d256_none f8E4M3FN_d256_causal bf16_d64_none bf16_d128_none bf16_d128_causal bf16_d256_none"
if [ "$1" = gen ]; then
  set -e; [ -z "$(git status --porcelain lib include test)" ] || { echo "lib, include or test not clean"; exit 1; }
  rm -rf $W; mkdir -p $W/base
  for k in $KS; do cp kernels_generated/fa_fwd_sm90a_$k.{json,ptx} $W/base/; done
  git apply $S/rescale-before-pv.diff; ninja -C build >/dev/null
  for d in 128 256; do for m in none causal; do build/bin/fa-compile --target sm_90a --dtype f8e4m3fn -d $d --mask $m -o $W/new >/dev/null; done; done
  for dm in 64:none 128:none 128:causal 256:none; do build/bin/fa-compile --target sm_90a --dtype bf16 -d ${dm%:*} --mask ${dm#*:} -o $W/new >/dev/null; done
  # newdec: also V's staging slot released by the transpose at D128 (7-10%
  # slower without the new order; does the overlap change that?)
  sed -i 's/return isE4M3(c.elementType) \&\& c.valueDim > 128;/return isE4M3(c.elementType);/' lib/Conversion/FAToGPU/Hopper/HopperStrategy.h
  ninja -C build >/dev/null; build/bin/fa-compile --target sm_90a --dtype f8e4m3fn -d 128 -o $W/newdec >/dev/null
  git checkout lib include test; ninja -C build >/dev/null; cp $S/sass_order.py $W/
  for f in $W/*/*.ptx; do echo "$f $(/usr/local/cuda/bin/ptxas -arch=sm_90a -v $f -o /dev/null 2>&1 | grep -o 'C75[0-9]*\|[0-9]* bytes spill stores' | head -2 | paste -sd' ')"; done
  exit 0
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
# Where does the P·V wait (W0) sit now: after the exponentials (m) or before?
for v in base new; do for k in f8E4M3FN_d128_none bf16_d128_none; do p=$W/$v/fa_fwd_sm90a_$k.ptx
  ptxas -arch=sm_90a $p -o ${p%.ptx}.cubin && python3 $W/sass_order.py ${p%.ptx}.cubin | cut -c1-700; done; done
{ for k in $W/new/*.json $W/newdec/*.json; do spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    if [[ $k == *f8E4M3FN* ]]; then
      echo "--kernel $k --spec \"$spec,descale=tensor\" --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
      echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"
    else echo "--kernel $k --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"; fi; done; done; } > /tmp/jobs
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "rescale verify" < /tmp/jobs
for k in f8E4M3FN_d128_none bf16_d128_causal; do for tool in racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $W/new/fa_fwd_sm90a_$k.json --b 2 --hq 4 --hkv 2 --m 77 --n 531 --layout bshd --verify > /tmp/san.log 2>&1
  echo "  $tool $k: rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in f8E4M3FN_d128_none f8E4M3FN_d128_causal f8E4M3FN_d256_none bf16_d128_none; do for v in base new newdec; do
  [ -f $W/$v/fa_fwd_sm90a_$k.json ] || continue
  echo "$r $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"; done
