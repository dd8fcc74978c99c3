set -e; FA=build/bin/fa-compile; W=scratch/lpt; rm -rf $W; mkdir -p $W/base $W/l16 $W/l32 $W/l64
for spec in "--target sm_80 --d 64" "--target sm_80 --d 128" "--target sm_90a --d 128" "--target sm_90a --d 256" "--target sm_80 --d 256"; do
  $FA $spec --mask causal --bwd -o $W/base >/dev/null
  FA_LPT=16 $FA $spec --mask causal --bwd -o $W/l16 >/dev/null
  FA_LPT=32 $FA $spec --mask causal --bwd -o $W/l32 >/dev/null
  FA_LPT=64 $FA $spec --mask causal --bwd -o $W/l64 >/dev/null
done
$FA --target sm_80 --d 128 --mask "window(300,0)" --bwd -o $W/l32 >/dev/null; FA_LPT=32 $FA --target sm_80 --d 128 --mask "window(300,0)" --bwd -o $W/l32w >/dev/null
ls $W/l16
