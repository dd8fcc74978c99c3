# nvcc flags of FlashAttention-3's setup.py (plus what torch's CUDAExtension
# adds), for its sources extracted under $FA3 (get-sources.sh).
FA3="${FA3:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scratch/fa3}"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
FLAGS="-O3 -std=c++17 --ftemplate-backtrace-limit=0 --use_fast_math -lineinfo -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED -DCUTLASS_ENABLE_GDC_FOR_SM90 -DCUTLASS_DEBUG_TRACE_LEVEL=0 -DNDEBUG -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a -I$FA3/fa/hopper -I$FA3/cutlass/include"
