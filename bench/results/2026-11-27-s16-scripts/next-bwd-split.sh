# For the next session (written 2026-11-27, sixteenth session; compiled,
# unit-tested and ptxas-checked here, not run on a GPU): the sm_90a
# backward's Q blocks that see every key of K_j in a loop of their own,
# without the mask's branch (bwd-split.diff) -- the forward's 89da785 for
# the KV-outer loop. The backward has the forward's structure: the mask's
# `@p bra` sits between S's / dP's wgmma issue and the dP wait (PTX of
# fa_bwd_sm90a_bf16_d128_causal). The diff: MaskUtils
# buildUnmaskedQueryRange (the transpose of buildUnmaskedKeyRange; its
# unit test, exhaustive on small sizes, catches either bound moved by
# one: 527 and 310 failures), BackwardMath::setTilesUnmasked, and the
# consumers' forQueryBlocks in three ranges (the producer's loop is not
# split; the step counter is the same). ptxas here: D64 / D256 spill
# unchanged (28 / 40 B, 0 B); D128 none 48 -> 128 B, causal 84 -> 160 B:
# watch D128.
#   gen (build machine, clean lib/include/unittests):
#     bash bench/results/2026-11-27-s16-scripts/next-bwd-split.sh gen
#   device (two calls, each under the 600 s limit):
#     run(carry=["scratch/bs"], command="bash bench/results/2026-11-27-s16-scripts/next-bwd-split.sh verify 2>&1 | tee $OUT/log")
#     run(carry=["scratch/bs"], command="bash bench/results/2026-11-27-s16-scripts/next-bwd-split.sh time 2>&1 | tee $OUT/log")
# If it pays: apply the diff, a strategy rule for where (as
# splitsUnmaskedTiles), fa-compile --standard-set, make-backward-kernels,
# verify-backward.sh, BENCHMARKS.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/bs
S=bench/results/2026-11-27-s16-scripts
if [ "$1" = gen ]; then
  set -e; [ -z "$(git status --porcelain lib include unittests)" ] || { echo "lib, include or unittests not clean"; exit 1; }
  rm -rf $W; mkdir -p $W/base $W/new $W/neg
  ninja -C build fa-compile >/dev/null
  make_set() { # $1: dir
    for d in 64 128 256; do for mask in none causal; do
      build/bin/fa-compile --target sm_90a --d $d --dtype bf16 --mask $mask --bwd -o $1 >/dev/null; done; done
    build/bin/fa-compile --target sm_90a --d 128 --mask "window(256,0)" --bwd -o $1 >/dev/null
    build/bin/fa-compile --target sm_90a --d 64 --mask causal --alibi head --bwd -o $1 >/dev/null
    for d in 128 256; do build/bin/fa-compile --target sm_90a --d $d --mask causal --bwd --deterministic -o $1 >/dev/null; done; }
  make_set $W/base
  git apply $S/bwd-split.diff; ninja -C build fa-compile FADialectTests >/dev/null
  build/unittests/FADialectTests --gtest_filter='MaskUtils*' | tail -1
  make_set $W/new
  # negative control: the unmasked Q blocks start one block early (a
  # diagonal block run without its mask)
  sed -i 's|    Value first = clamp(arith::CeilDivSIOp::create(|    Value first = clamp(arith::SubIOp::create(b, loc, arith::CeilDivSIOp::create(|' lib/Conversion/FAToGPU/Hopper/HopperBackward.cpp
  python3 - <<'PY'
p='lib/Conversion/FAToGPU/Hopper/HopperBackward.cpp'
s=open(p).read()
s=s.replace("""                            blockM),
                        idx(b, 0));""","""                            blockM), idx(b, 1)),
                        idx(b, 0)); // NEGATIVE CONTROL""",1)
open(p,'w').write(s)
PY
  ninja -C build fa-compile >/dev/null
  build/bin/fa-compile --target sm_90a --d 128 --mask causal --bwd -o $W/neg >/dev/null
  git checkout lib include unittests; ninja -C build >/dev/null
  for f in $W/*/fa_bwd*.ptx; do echo "$f $(/usr/local/cuda/bin/ptxas -arch=sm_90a -v $f -o /dev/null 2>&1 | grep -o 'C75[0-9]*\|[0-9]* bytes spill stores' | head -1)"; done
  exit 0
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
if [ "$1" = verify ]; then
{ for fwd in $W/new/fa_fwd_*.json; do
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    if [ $m = 4096 ]; then echo "--kernel $fwd --bwd --b 1 --hq 2 --hkv 1 --m $m --n $n --layout bshd"
    else echo "--kernel $fwd --bwd --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
      echo "--kernel $fwd --bwd --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"; fi
  done; done; } > /tmp/jobs
FA_PARALLEL=8 FA_JOB_TIMEOUT=300 timeout 360 bash bench/verify-parallel.sh $F "bwd split verify" < /tmp/jobs
for size in 1023x1024 4096x4096; do
  $F --device cuda --kernel $W/neg/fa_fwd_sm90a_bf16_d128_causal.json --bwd --b 1 --hq 2 --hkv 1 --m ${size%x*} --n ${size#*x} --verify > /tmp/neg.log 2>&1
  echo "negative control (one diagonal Q block unmasked) $size: rc=$? $(grep -o 'verdict: [A-Z]*' /tmp/neg.log)"; done
for k in d128_causal d128_win256_0; do for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $W/new/fa_fwd_sm90a_bf16_$k.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 331 --verify > /tmp/san.log 2>&1
  echo "  $tool $k: rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
for d in 128 256; do fwd=$W/new/fa_fwd_sm90a_bf16_d${d}_causal.json; det=$W/new/fa_bwd_sm90a_bf16_d${d}_causal_det.json
  $F --device cuda --kernel $fwd --bwd-kernel $det --bwd --deterministic --verify --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd 2>&1 | grep -E '^deterministic|verdict' | tr '\n' ' '; echo; done
echo "   ($((SECONDS - start)) s)"
exit 0
fi
L=build-gpu/runtime/libfa_runtime.so
for d in 64 128 256; do for mask in none causal; do k=sm90a_bf16_d${d}_$mask
  python3 bench/bwd_variants.py $L $W/base/fa_fwd_$k.json base=$W/base/fa_bwd_$k.json new=$W/new/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | tail -4; done; done
for d in 128 256; do k=sm90a_bf16_d${d}_causal
  python3 bench/bwd_variants.py $L $W/base/fa_fwd_$k.json base@det=$W/base/fa_bwd_${k}_det.json new@det=$W/new/fa_bwd_${k}_det.json new=$W/new/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | tail -4; done
echo "   ($((SECONDS - start)) s)"
