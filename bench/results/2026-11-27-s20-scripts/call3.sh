# Twentieth session, call 3: the 64 x 64 D256 backward (w0 = 038c343's) with
# the interior Q/dO copies (w1), dQ's reduce-adds predicated per row slot
# instead of branched (w2), both (w3); the runtime's refusal of a kernel
# past the device's shared memory.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s20; F=build-gpu/bin/fa-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
echo "== refusal past the device's shared memory"
mkdir -p /tmp/big && cp $W/w0/fa_bwd_sm80_bf16_d256_none.* /tmp/big/ && cp $W/base/fa_fwd_sm80_bf16_d256_none.* /tmp/big/
sed -i 's/"dynamic_shared_memory": 212992/"dynamic_shared_memory": 240640/' /tmp/big/fa_bwd_sm80_bf16_d256_none.json
$F --device cuda --kernel /tmp/big/fa_fwd_sm80_bf16_d256_none.json --bwd --b 1 --hq 2 --hkv 1 --m 113 --n 203 --verify; echo "exit $?"
echo "== verify"
: > /tmp/jobs.txt
for v in w1 w2 w3; do for m in none causal; do k=$W/$v/fa_bwd_sm80_bf16_d256_$m.json; fwd=$W/base/fa_fwd_sm80_bf16_d256_$m.json
  sizes="1x1 113x203 128x217 1023x1024"; [ $v = w3 ] && sizes="$sizes 4096x4096"
  for size in $sizes; do for heads in "mha bhsd --hq 4 --hkv 4" "gqa bshd --hq 8 --hkv 2"; do
    set -- ${size/x/ } $heads; mm=$1; nn=$2; kind=$3; lay=$4; shift 4; b=2
    [ $mm = 4096 ] && { b=1; set -- --hq 2 --hkv 1; }
    echo "$F --device cuda --kernel $fwd --bwd-kernel $k --bwd --b $b $* --m $mm --n $nn --layout $lay --seed $RANDOM --verify # $v/$m $size $kind" >> /tmp/jobs.txt
  done; done; done; done
xargs -d '\n' -P 4 -I{} bash $W/runjob.sh {} < /tmp/jobs.txt > /tmp/vres.txt
grep -v '^OK' /tmp/vres.txt
echo "verified $(grep -c '^OK' /tmp/vres.txt) / $(wc -l < /tmp/jobs.txt) ($((SECONDS - start)) s)"
for v in w3; do k=$W/$v/fa_bwd_sm80_bf16_d256_causal.json
  for tool in memcheck racecheck; do
    echo "$v $tool: $(compute-sanitizer --tool $tool $F --device cuda --kernel $W/base/fa_fwd_sm80_bf16_d256_causal.json --bwd-kernel $k --bwd --b 1 --hq 2 --hkv 1 --m 113 --n 203 --verify 2>&1 | grep -E 'ERROR SUMMARY|verdict' | tr '\n' ' ')"
  done; done
echo "== sm_80 D256 forward + backward, B4 H16 N4k ($((SECONDS - start)) s)"
for round in 1 2 3; do for mask in none causal; do k=sm80_bf16_d256_$mask
  python3 bench/bwd_variants.py $L $W/base/fa_fwd_$k.json w0=$W/w0/fa_bwd_$k.json w1=$W/w1/fa_bwd_$k.json w2=$W/w2/fa_bwd_$k.json w3=$W/w3/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$round $k /"
done; echo "   ($((SECONDS - start)) s)"; done
