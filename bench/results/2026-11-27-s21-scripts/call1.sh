# Twenty-first session, call 1 (from the twentieth's next-session.sh, plus
# c8a1436's base kernels at 4096^2, which it had not verified): the sm_80 D256 64 x 64 backward (227 KB budget)
# with dQ's matmul and reduce-adds before dK's MMAs (FA2's order; the ncu
# page's E3, bench/results/2026-11-27-s20-ncu/sm80-d256-e85bd85-vs-fa2.md).
# Before c8a1436 moved the LSE / D prefetch this order measured +1%; on
# c8a1436 ptxas reports causal's spill 296 -> 264 B (none 216 B both).
# And (st) dK_j / dV_j staged through the Q / dO rings and stored 16 bytes
# a thread (FA2's epilogue, the page's E4; sm80-d256-staged-gradients.diff:
# storeTileFromShared, storesGradientsThroughShared; ptxas 244 / 304 B of
# spill, 16 st.global.v4 a kernel; the standard set's PTX unchanged).
#   gen (build machine, clean lib/include):
#     bash bench/results/2026-11-27-s21-scripts/call1.sh gen
#   device: run(carry=["scratch/next21"], command="bash bench/results/2026-11-27-s21-scripts/call1.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/next21; S20=bench/results/2026-11-27-s20-scripts
if [ "$1" = gen ]; then
  set -e; [ -z "$(git status --porcelain lib include)" ] || { echo "lib or include not clean"; exit 1; }
  rm -rf $W; mkdir -p $W
  for m in none causal; do
    build/bin/fa-compile --d 256 --mask $m --bwd --shared-memory-budget 227 -o $W/base >/dev/null
  done
  git apply $S20/sm80-d256-dq-first.diff && ninja -C build >/dev/null
  for m in none causal; do
    build/bin/fa-compile --d 256 --mask $m --bwd --shared-memory-budget 227 -o $W/dq >/dev/null
  done
  git apply -R $S20/sm80-d256-dq-first.diff
  git apply $S20/sm80-d256-staged-gradients.diff && ninja -C build >/dev/null
  for m in none causal; do
    build/bin/fa-compile --d 256 --mask $m --bwd --shared-memory-budget 227 -o $W/st >/dev/null
  done
  git apply -R $S20/sm80-d256-staged-gradients.diff && ninja -C build >/dev/null
  cp $S20/runjob.sh $W/; exit 0
fi
F=build-gpu/bin/fa-run; start=$SECONDS
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
: > /tmp/jobs.txt
for v in dq st; do for m in none causal; do k=$W/$v/fa_bwd_sm80_bf16_d256_$m.json; fwd=$W/base/fa_fwd_sm80_bf16_d256_$m.json
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do for heads in "mha bhsd --hq 4 --hkv 4" "gqa bshd --hq 8 --hkv 2"; do
    set -- ${size/x/ } $heads; mm=$1; nn=$2; kind=$3; lay=$4; shift 4; b=2
    [ $mm = 4096 ] && { b=1; set -- --hq 2 --hkv 1; }
    echo "$F --device cuda --kernel $fwd --bwd-kernel $k --bwd --b $b $* --m $mm --n $nn --layout $lay --seed $RANDOM --verify # $v/$m $size $kind" >> /tmp/jobs.txt
  done; done; done; done
for m in none causal; do for heads in "mha bhsd --hq 2 --hkv 2" "gqa bshd --hq 2 --hkv 1"; do set -- $heads; kind=$1; lay=$2; shift 2
  echo "$F --device cuda --kernel $W/base/fa_fwd_sm80_bf16_d256_$m.json --bwd-kernel $W/base/fa_bwd_sm80_bf16_d256_$m.json --bwd --b 1 $* --m 4096 --n 4096 --layout $lay --seed $RANDOM --verify # base/$m 4096x4096 $kind" >> /tmp/jobs.txt
done; done
{ grep 4096x4096 /tmp/jobs.txt; grep -v 4096x4096 /tmp/jobs.txt; } > /tmp/j2.txt; mv /tmp/j2.txt /tmp/jobs.txt  # the long 4096 jobs first
xargs -d '\n' -P 8 -I{} bash $W/runjob.sh {} < /tmp/jobs.txt > /tmp/vres.txt
grep -v '^OK' /tmp/vres.txt; echo "verified $(grep -c '^OK' /tmp/vres.txt) / $(wc -l < /tmp/jobs.txt) ($((SECONDS - start)) s)"
for v in dq st; do for tool in memcheck racecheck; do
  echo "$v $tool: $(compute-sanitizer --tool $tool $F --device cuda --kernel $W/base/fa_fwd_sm80_bf16_d256_causal.json --bwd-kernel $W/$v/fa_bwd_sm80_bf16_d256_causal.json --bwd --b 1 --hq 2 --hkv 1 --m 113 --n 203 --verify 2>&1 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|verdict' | tr '\n' ' ')"
done; done
for round in 1 2 3; do for m in none causal; do k=sm80_bf16_d256_$m
  python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so $W/base/fa_fwd_$k.json base=$W/base/fa_bwd_$k.json dq=$W/dq/fa_bwd_$k.json st=$W/st/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$round $k /"
done; echo "   ($((SECONDS - start)) s)"; done
