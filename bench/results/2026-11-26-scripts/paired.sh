# Call 3 (2026-11-26): (a) masked sm_90a forwards persistent over pairs of
# Q blocks (TileOrder::Paired, made with FA_PAIRED_TILES=1 into
# scratch/paired): verify incl. odd T and M > N, sanitizers, then timed
# against the committed per-block kernels beside SDPA; (b) the D256
# deterministic backward with a staging buffer per part (1 Q stage)
# against the one with 2 Q stages (scratch/det-q2); (c) the ALiBi
# batch_head slopes the first call's script skipped.
# Device: run(command="bash bench/results/2026-11-26-scripts/paired.sh 2>&1 | tee $OUT/log",
#             carry=["bench/backward-kernels", "bench/feature-kernels", "scratch"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name --format=csv,noheader)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; D=bench/backward-kernels; P=scratch/paired; start=$SECONDS
echo "== (a) paired forwards: verify"
for k in $P/*.json; do
  for s in 1x1 113x203 128x217 300x300 640x200 1023x1024 1100x1100; do m=${s%x*}; n=${s#*x}
    echo "--kernel $k --b 2 --hq 4 --hkv 4 --layout bhsd --m $m --n $n"
    echo "--kernel $k --b 2 --hq 8 --hkv 2 --layout bshd --m $m --n $n"; done
  echo "--kernel $k --b 1 --hq 2 --hkv 2 --layout bhsd --m 4096 --n 4096"
  echo "--kernel $k --b 1 --hq 4 --hkv 1 --layout bshd --m 4096 --n 4096"
done | FA_PARALLEL=14 timeout 200 bash bench/verify-parallel.sh $F "paired forward verify"
echo "== (c) ALiBi, batch_head slopes"
for k in bench/feature-kernels/*alibi*.json kernels_generated/*alibi*.json; do
  spec=$(grep -o '"spec": "[^"]*"' "$k" | cut -d'"' -f4); spec="--spec \"${spec/alibi=head/alibi=batch_head}\""
  for s in 1x1 113x203 128x217 1023x1024; do m=${s%x*}; n=${s#*x}
    echo "--kernel $k $spec --b 2 --hq 4 --hkv 4 --layout bhsd --m $m --n $n"
    echo "--kernel $k $spec --b 2 --hq 8 --hkv 2 --layout bshd --m $m --n $n"; done
  [[ $k == *sm90a* ]] && echo "--kernel $k $spec --b 1 --hq 2 --hkv 2 --layout bhsd --m 4096 --n 4096" && echo "--kernel $k $spec --b 1 --hq 4 --hkv 1 --layout bshd --m 4096 --n 4096"
done | FA_PARALLEL=14 timeout 150 bash bench/verify-parallel.sh $F "ALiBi batch_head verify"
echo "   ($((SECONDS - start)) s)"
echo "== (a) paired: sanitizers"
for k in bf16_d64_causal bf16_d128_win256_0; do for tool in memcheck racecheck synccheck; do for a in "--b 1 --hq 1 --hkv 1 --m 64 --n 64" "--b 2 --hq 4 --hkv 2 --m 300 --n 203 --layout bshd"; do
  ( timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $P/fa_fwd_sm90a_$k.json $a --verify > /tmp/s-$tool-$k-${a// /}.log 2>&1
    echo "  $tool $k ($a): rc=$? $(grep -h 'ERROR SUMMARY' /tmp/s-$tool-$k-${a// /}.log)" ) &
done; done; done; wait
echo "   ($((SECONDS - start)) s)"
echo "== (b) D256 deterministic: a staging buffer per part (det) against 2 Q stages (det-q2)"
for m in none causal; do
  timeout 120 $F --device cuda --kernel $D/fa_fwd_sm90a_bf16_d256_$m.json --bwd-kernel $D/fa_bwd_sm90a_bf16_d256_${m}_det.json --bwd --deterministic --verify \
    --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd 2>&1 | grep -E '^deterministic|verdict' | tr '\n' ' '; echo " ($m)"
  for r in 1 2; do for kk in $D/fa_bwd_sm90a_bf16_d256_$m $D/fa_bwd_sm90a_bf16_d256_${m}_det scratch/det-q2/fa_bwd_sm90a_bf16_d256_${m}_det; do
    echo "  r$r $kk: $($F --device cuda --kernel $D/fa_fwd_sm90a_bf16_d256_$m.json --bwd-kernel $kk.json --bwd $([[ $kk == *_det ]] && echo --deterministic) --bench --iters 20 \
      --b 4 --hq 16 --hkv 16 --m 4096 --n 4096 2>&1 | grep -iE 'tflop' | tr '\n' ' ' | sed 's/over 20 iterations (1 input sets)//')"; done; done
done
echo "   ($((SECONDS - start)) s)"
echo "== (a) per-block (committed) against paired, same rounds beside SDPA"
V="timeout 150 python3 bench/variants.py build-gpu/runtime/libfa_runtime.so"
$V 2048,4096,8192 per_block=kernels_generated/fa_fwd_sm90a_bf16_d64_causal.json paired=$P/fa_fwd_sm90a_bf16_d64_causal.json
$V 2048,8192 per_block=kernels_generated/fa_fwd_sm90a_bf16_d128_causal.json paired=$P/fa_fwd_sm90a_bf16_d128_causal.json
$V 2048,8192 per_block=kernels_generated/fa_fwd_sm90a_bf16_d256_causal.json paired=$P/fa_fwd_sm90a_bf16_d256_causal.json
echo "   ($((SECONDS - start)) s)"
