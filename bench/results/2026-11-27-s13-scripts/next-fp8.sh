# For the next session (written 2026-11-27, thirteenth session, not yet
# run on a GPU): the fp8 leads of perf-notes.md's thirteenth-session
# sections in one device call.
#   gen (build machine, clean tree at c7cb20e or later):
#     bash bench/results/2026-11-27-s13-scripts/next-fp8.sh gen
#   device: run(carry=["scratch/n"], command="bash bench/results/2026-11-27-s13-scripts/next-fp8.sh 2>&1 | tee $OUT/log")
# Variants (scratch/n/<variant>/fa_fwd_sm90a_f8E4M3FN_d{128,256}_{none,causal}.json):
#   base   HEAD
#   ldsm   + the ldmatrix / stmatrix transpose (fp8-ldmatrix-transpose.diff)
#   r24    + ldsm + FA3's 24 / 240 registers for e4m3 at two consumer groups
#   paired + ldsm + TileOrder::Paired for masked e4m3 (causal only)
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/n
S=bench/results/2026-11-27-s13-scripts
if [ "$1" = gen ]; then
  set -e; [ -z "$(git status --porcelain lib include test)" ] || { echo "lib, include or test not clean"; exit 1; }
  rm -rf $W; gen() { for d in 128 256; do for m in none causal; do
    build/bin/fa-compile --target sm_90a --dtype f8e4m3fn -d $d --mask $m -o $W/$1 >/dev/null; done; done; }
  ninja -C build >/dev/null; gen base
  git apply $S/fp8-ldmatrix-transpose.diff; ninja -C build >/dev/null; gen ldsm
  sed -i 's|    return e4m3 ? RegisterBudget{40, 232} : RegisterBudget{24, 240};|    return RegisterBudget{24, 240};|' lib/Conversion/FAToGPU/Hopper/HopperStrategy.h
  ninja -C build >/dev/null; gen r24; git checkout lib/Conversion/FAToGPU/Hopper/HopperStrategy.h
  sed -i 's|  return isE4M3(c.elementType) ? TileOrder::PerBlock : TileOrder::Paired;|  return TileOrder::Paired;|' lib/Conversion/FAToGPU/Hopper/HopperStrategy.cpp
  ninja -C build >/dev/null; gen paired
  git checkout lib test; ninja -C build >/dev/null
  for f in $W/*/*.ptx; do echo "$f $(/usr/local/cuda/bin/ptxas -arch=sm_90a -v $f -o /dev/null 2>&1 | grep -oE '[0-9]+ bytes spill stores|C7512' | paste -sd' ')"; done
  exit 0
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
{ for k in $W/ldsm/*.json $W/r24/*.json $W/paired/*causal.json; do
  spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    echo "--kernel $k --spec \"$spec,descale=tensor\" --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
    echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"; done; done; } > /tmp/jobs
echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 400 bash bench/verify-parallel.sh $F "fp8 next verify" < /tmp/jobs
for v in ldsm r24; do for tool in memcheck racecheck synccheck; do k=$W/$v/fa_fwd_sm90a_f8E4M3FN_d256_none.json
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $k --b 2 --hq 4 --hkv 2 --m 77 --n 131 --layout bshd --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool $v d256: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in d128_none d128_causal d256_none d256_causal; do for v in base ldsm r24 paired; do
  [ $v = paired ] && [[ $k == *none ]] && continue
  echo "$r $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"; done
