# Twentieth session, call 4: the fp8 suite on the committed kernels (e4m3
# D128 causal now split); the Q-block walk rotated by KV block (r1) against
# e85bd85's (r0) on the unmasked sm_80 kernels.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s20; F=build-gpu/bin/fa-run; start=$SECONDS
FA_PARALLEL=8 bash bench/verify-fp8.sh --steps 23 > $OUT/fp8.log 2>&1; echo "fp8 rc=$? ($((SECONDS - start)) s)"
grep -E "verified|NEGATIVE|negative|SANITIZER|ERROR SUMMARY|spill|FAIL" $OUT/fp8.log | sort | uniq -c | head -20
L=build-gpu/runtime/libfa_runtime.so
: > /tmp/jobs.txt
for d in 64 128 256; do k=$W/r1/fa_bwd_sm80_bf16_d${d}_none.json; fwd=$W/base/fa_fwd_sm80_bf16_d${d}_none.json
  sizes="1x1 113x203 1023x1024"; [ $d = 256 ] && sizes="$sizes 128x217 4096x4096"
  for size in $sizes; do for heads in "mha bhsd --hq 4 --hkv 4" "gqa bshd --hq 8 --hkv 2"; do
    set -- ${size/x/ } $heads; mm=$1; nn=$2; kind=$3; lay=$4; shift 4; b=2
    [ $mm = 4096 ] && { b=1; set -- --hq 2 --hkv 1; }
    echo "$F --device cuda --kernel $fwd --bwd-kernel $k --bwd --b $b $* --m $mm --n $nn --layout $lay --seed $RANDOM --verify # r1/d$d $size $kind" >> /tmp/jobs.txt
  done; done; done
xargs -d '\n' -P 4 -I{} bash $W/runjob.sh {} < /tmp/jobs.txt > /tmp/vres.txt
grep -v '^OK' /tmp/vres.txt
echo "verified $(grep -c '^OK' /tmp/vres.txt) / $(wc -l < /tmp/jobs.txt) ($((SECONDS - start)) s)"
for round in 1 2; do k=sm80_bf16_d256_none
  python3 bench/bwd_variants.py $L $W/base/fa_fwd_$k.json r0=$W/r0/fa_bwd_$k.json r1=$W/r1/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$round $k /"
done; echo "   ($((SECONDS - start)) s)"
echo "done ($((SECONDS - start)) s)"
