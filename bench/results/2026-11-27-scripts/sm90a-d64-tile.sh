set -o pipefail; export PYTHONUNBUFFERED=1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; K=kernels_generated; W=scratch/d64h
for s in "--b 2 --hq 4 --hkv 2 --m 113 --n 203" "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd" "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; do
  $F --device cuda --kernel $K/fa_fwd_sm90a_bf16_d64_none.json --bwd-kernel $W/fa_bwd_sm90a_bf16_d64_none.json --bwd $s --verify | tail -1; done
for r in 1 2; do timeout 150 python3 bench/bwd_variants.py $L $K/fa_fwd_sm90a_bf16_d64_none.json default=$K/fa_bwd_sm90a_bf16_d64_none.json t128=$W/fa_bwd_sm90a_bf16_d64_none.json detnomode=$W/fa_bwd_sm90a_bf16_d64_none_det.json det@det=$W/fa_bwd_sm90a_bf16_d64_none_det.json 2>&1 | grep "^|"; done
