# Twenty-first session, call 6: the committed sm_80 D128 backward (64 x 128:
# LSE / D a Q block ahead at immediate offsets) and its window and f16
# twins: fa-run --bwd --verify at the sizes (bench/backward-kernels,
# parallel), and memcheck / racecheck / synccheck.
set -o pipefail; D=bench/backward-kernels; F=build-gpu/bin/fa-run; start=$SECONDS
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
: > /tmp/jobs.txt
for fwd in $D/fa_fwd_sm80_{bf16,f16}_d128_{none,causal,win256_0}.json; do [ -f $fwd ] || continue
  for size in 4096x4096 1x1 113x203 128x217 1023x1024; do for heads in "mha bhsd --hq 4 --hkv 4" "gqa bshd --hq 8 --hkv 2"; do
    set -- ${size/x/ } $heads; mm=$1; nn=$2; kind=$3; lay=$4; shift 4; b=2
    [ $mm = 4096 ] && { b=1; set -- --hq 2 --hkv 1; }
    echo "$F --device cuda --kernel $fwd --bwd --b $b $* --m $mm --n $nn --layout $lay --seed $RANDOM --verify # $(basename $fwd .json) $size $kind" >> /tmp/jobs.txt
  done; done; done
xargs -d '\n' -P 8 -I{} bash scratch/s21d128/runjob.sh {} < /tmp/jobs.txt > /tmp/vres.txt
grep -v '^OK' /tmp/vres.txt; echo "verified $(grep -c '^OK' /tmp/vres.txt) / $(wc -l < /tmp/jobs.txt) ($((SECONDS - start)) s)"
for fwd in $D/fa_fwd_sm80_bf16_d128_none.json $D/fa_fwd_sm80_bf16_d128_causal.json; do
  for tool in memcheck racecheck synccheck; do for size in "--m 64 --n 64" "--m 77 --n 131"; do
    compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $fwd --bwd --b 1 --hq 2 --hkv 1 $size --verify > /tmp/san.log 2>&1
    echo "$tool $(basename $fwd .json) $size: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK' /tmp/san.log | head -1)"
  done; done; done
echo "   ($((SECONDS - start)) s)"
