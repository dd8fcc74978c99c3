set -o pipefail; F=build-gpu/bin/fa-run
[ -x $F ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null; }
mkdir -p $OUT
{ for k in scratch/v4/*.json scratch/v4odd/*.json scratch/v5/*.json; do spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  sizes="1x1 113x203 128x217 1023x1024"; [[ $k == */v4/* ]] && sizes="$sizes 4096x4096"
  for size in $sizes; do
    echo "--kernel $k --spec \"$spec,descale=tensor\" --b 2 --hq 4 --hkv 4 --m ${size%x*} --n ${size#*x} --layout bhsd"
    echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m ${size%x*} --n ${size#*x} --layout bshd"; done; done; } > /tmp/jobs
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 300 bash bench/verify-parallel.sh $F "v4 verify" < /tmp/jobs 2>&1 | tail -6
for d in 128 256; do timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $F --device cuda --kernel scratch/v4/fa_fwd_sm90a_f8E4M3FN_d${d}_none.json --b 1 --hq 2 --hkv 2 --m 300 --n 700 --verify > /tmp/san.log 2>&1; echo "racecheck d$d: rc=$?"; done
for k in d256_none d128_none; do bash bench/sass-spills.sh scratch/v4/fa_fwd_sm90a_f8E4M3FN_$k.ptx > $OUT/v4-$k-spills.txt 2>&1; cuobjdump --dump-sass /tmp/fa_fwd_sm90a_f8E4M3FN_$k.cubin > $OUT/v4-$k.sass; done
for round in 1 2 3; do for k in d256_none d256_causal d128_none d128_causal; do for v in kernels_generated scratch/v1 scratch/v4 scratch/v5; do
  [ -f $v/fa_fwd_sm90a_f8E4M3FN_$k.json ] || continue
  echo "$round $k $v $($F --device cuda --kernel $v/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; done
