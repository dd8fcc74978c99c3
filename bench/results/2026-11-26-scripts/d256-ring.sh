# The D256 backward with dO on a ring of its own and a second Q stage
# (2026-11-26): verify, negative control, sanitizers, deterministic mode,
# then main's PTX against the new in the same rounds beside SDPA.
# Here, before: bash bench/make-backward-kernels.sh; the D256 deterministic
# and negative-d256 kernels (fa-compile --target sm_90a --d 256 [--mask
# causal] --bwd --deterministic; --test-omit-row-dot); main's D256
# backwards into scratch/main-d256 (git show HEAD~:kernels_generated/...).
# Device: run(command="bash bench/results/2026-11-26-scripts/d256-ring.sh 2>&1 | tee $OUT/log",
#             carry=["bench/backward-kernels", "scratch"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== revision $(git rev-parse --short HEAD 2>/dev/null), $(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name --format=csv,noheader)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; D=bench/backward-kernels; start=$SECONDS
echo "== D256 pairs: fa-run --bwd --verify at (1,1) (113,203) (128,217) (1023,1024) x MHA bhsd / GQA bshd, (4096,4096)"
for k in $D/fa_fwd_sm90a_*d256*.json; do
  for s in "1 1" "113 203" "128 217" "1023 1024"; do set -- $s
    echo "--kernel $k --bwd --b 2 --hq 4 --hkv 4 --layout bhsd --m $1 --n $2"
    echo "--kernel $k --bwd --b 2 --hq 8 --hkv 2 --layout bshd --m $1 --n $2"
  done
  echo "--kernel $k --bwd --b 1 --hq 1 --hkv 1 --layout bhsd --m 4096 --n 4096"
  echo "--kernel $k --bwd --b 1 --hq 2 --hkv 1 --layout bshd --m 4096 --n 4096"
done | FA_PARALLEL=14 timeout 300 bash bench/verify-parallel.sh $F "D256 backward verify"
echo "   ($((SECONDS - start)) s)"
$F --device cuda --kernel $D/negative-d256/fa_fwd_sm90a_bf16_d256_none.json --bwd-kernel $D/negative-d256/fa_bwd_sm90a_bf16_d256_none.json \
  --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1
echo "negative control (D256 without D): rc=$? (1 = caught)"
echo "== deterministic D256: verify, bit-identical over 10 runs, cost"
for m in none causal; do
  timeout 120 $F --device cuda --kernel $D/fa_fwd_sm90a_bf16_d256_$m.json --bwd-kernel $D/fa_bwd_sm90a_bf16_d256_${m}_det.json --bwd --deterministic --verify \
    --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd 2>&1 | grep -E '^deterministic|verdict' | tr '\n' ' '; echo " ($m)"
  for kk in fa_bwd_sm90a_bf16_d256_$m fa_bwd_sm90a_bf16_d256_${m}_det; do
    echo "  $kk: $($F --device cuda --kernel $D/fa_fwd_sm90a_bf16_d256_$m.json --bwd-kernel $D/$kk.json --bwd $([[ $kk == *_det ]] && echo --deterministic) --bench --iters 20 \
      --b 4 --hq 16 --hkv 16 --m 4096 --n 4096 2>&1 | grep -iE 'tflop' | tr '\n' ' ')"; done
done
echo "== sanitizers (memcheck, racecheck, synccheck), D256 none / causal at 64x64 and GQA 77x131"
for k in bf16_d256_none bf16_d256_causal; do for tool in memcheck racecheck synccheck; do for a in "--b 1 --hq 1 --hkv 1 --m 64 --n 64" "--b 1 --hq 2 --hkv 1 --m 77 --n 131 --layout bshd"; do
  ( timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $D/fa_fwd_sm90a_$k.json --bwd $a --verify > /tmp/s-$tool-$k-${a// /}.log 2>&1
    echo "  $tool $k ($a): rc=$? $(grep -h 'ERROR SUMMARY' /tmp/s-$tool-$k-${a// /}.log)" ) &
done; done; done; wait
echo "   ($((SECONDS - start)) s)"
echo "== main's D256 backward against the ring's, same rounds beside SDPA (B4 H16 N4k)"
for m in none causal; do
  timeout 150 python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so kernels_generated/fa_fwd_sm90a_bf16_d256_$m.json \
    main=scratch/main-d256/fa_bwd_sm90a_bf16_d256_$m.json ring=$D/fa_bwd_sm90a_bf16_d256_$m.json
done
echo "   ($((SECONDS - start)) s)"
