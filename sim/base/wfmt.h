/* wfmt.h: storage formats of quantised weights.
 *
 * A GEMM's weights (its B operand) may be stored in a format other than the
 * op's dtype: llama.cpp's block formats, group-wise int4 (GPTQ/AWQ/gpt-fast),
 * bitsandbytes NF4, weight-only int8 or fp8.  Each format has an exact
 * size in bits per weight, scales included, and a dequantisation cost in
 * vector-pipe operations per weight (unpack, subtract the zero point,
 * scale), paid every time a kernel loads the weight.  Activations and the
 * matrix math stay in the op's dtype.
 *
 * Sizes (bits per weight = bytes per block * 8 / weights per block):
 *   q4_0   18 B / 32  = 4.5       (fp16 scale + 32 x 4 bit)      ggml-common.h block_q4_0
 *   q4_1   20 B / 32  = 5.0       (fp16 scale and min)           block_q4_1
 *   q5_0   22 B / 32  = 5.5                                      block_q5_0
 *   q8_0   34 B / 32  = 8.5       (fp16 scale + 32 x int8)       block_q8_0
 *   q4_k  144 B / 256 = 4.5       (2 fp16 + 12 B scales + 128 B) block_q4_K
 *   q5_k  176 B / 256 = 5.5                                      block_q5_K
 *   q6_k  210 B / 256 = 6.5625                                   block_q6_K
 *   int4_gN  4 + 32/N (bf16 scale and zero per group of N)       gpt-fast int4 / GPTQ-style
 *   int8   8              (per-channel scale, negligible)        weight-only int8
 *   nf4    4 + 8/64 + 32/(64*256) = 4.127 (double-quantised absmax)   bitsandbytes
 *   fp8    8
 *   exl2_B   B             ExLlamaV2's EXL2 at a target average of B bits a
 *                         weight (convert.py -b B: doc/convert.md "Target
 *                         average number of bits per weight"; each layer's
 *                         groups get 2-8 bits to reach it, taken to count
 *                         their scales); the bitrates turboderp's README
 *                         table and published quants use: 2.5, 3.0, 3.5,
 *                         4.0, 4.65, 5.0, 6.0, 8.0.  Dequantised as the
 *                         group-wise int4 kernels are (6 ops, int4_gN's fit)
 *   nvfp4  4 + 8/16 = 4.5     (e2m1 values, an e4m3 scale per 16, an fp32 scale
 *                             per tensor, negligible)   NVIDIA technical blog
 *                             "Introducing NVFP4 for Efficient and Accurate
 *                             Low-Precision Inference" (2025), Table 1
 *   mxfp4  4 + 8/32 = 4.25    (e2m1 values, an e8m0 scale per 32)   OCP
 *                             Microscaling Formats (MX) Specification v1.0,
 *                             MXFP4: k = 32, scale E8M0, element FP4 E2M1
 * These two are dtype.h's DT_NVFP4 and DT_MXFP4 (the same bits, scales
 * included), and they are the formats a matrix pipe may take as they are.
 * q4_k_m is not a format but llama.cpp's mix (q4_k, with q6_k for some
 * tensors); the LLM generator assigns it per tensor.
 *
 * Entropy-coded formats (FORMAT+huffman, the fifth column naming FORMAT):
 * the integer codes of FORMAT's blocks coded losslessly, the scales kept
 * as they are, decoded on the way from DRAM by a chip's decoder level
 * (LazyWeights; docs/lazyweights.md).  Their bits per weight are what DRAM,
 * the host and a file hold: the scales' bits plus the codes' entropy as
 * measured on real weights (OLMo-2-1124-7B-Instruct's GGUFs, llama.cpp
 * issue #397, comment of 2025-01-01: Q4_0 codes 3.77 bits of 4, Q4_K
 * 3.86-3.87, Q6_K 5.83-5.87; taken 3.77, 3.865, 5.85).  The entropy is the
 * bound a coder reaches (the same comment's tANS came within 0.1% of it);
 * a Huffman code of a 16-symbol alphabet can be a few hundredths of a bit
 * above it.  Formats with no public measurement of their codes have no
 * coded variant.  The dequantisation cost is the decoded format's.
 *
 * Dequantisation cost (fourth column, vector-pipe FLOP-equivalents per weight
 * on top of the 2 of the multiply-add): int8 (7.0) and int4_gN (6.0) were
 * fitted to gpt-fast's weight-only kernels on the A100 (GPTFAST-003 int8
 * and GPTFAST-005 int4 G=32, Llama-2-7B decode; docs/calibration.md); the
 * other formats' values are a priori operation counts (unpack, zero point,
 * scale), not fitted; nvfp4 and mxfp4: unpack, convert e2m1, scale.
 *
 * Matrix type (the sixth column; COUNT: none): a format whose values a
 * chip's matrix pipe multiplies as they are, block scales applied in the
 * MMA (Blackwell's block-scaled tcgen05.mma kinds mxf4 / mxf4nvf4).  On a
 * chip with a matrix rate for that type the GEMM runs W4A4, as
 * TensorRT-LLM and vLLM run NVFP4 and MXFP4 checkpoints there: the
 * activations are quantised to the same type and the MMA runs at its rate,
 * with nothing to dequantise.  Elsewhere the format is weight-only like the
 * others (Marlin-style FP4 kernels on Hopper).  The tiled GEMM lowering
 * decides (models/tiled/lower_gemm.c); traces and `fit` keep the op's dtype
 * for the activations and this table's bits for the weights either way.
 * fp8 has no matrix type here: `--weights fp8` stays weight-only (its W8A8
 * form is `--dtype fp8_e4m3`).
 */
#ifndef STRATA_WFMT_H
#define STRATA_WFMT_H

#include "dtype.h"

#define WFMT_MAP(X)                                         \
    X(NONE, "none", 0.0, 0.0, NONE, COUNT)                  \
    X(Q4_0, "q4_0", 4.5, 3.0, NONE, COUNT)                  \
    X(Q4_1, "q4_1", 5.0, 3.0, NONE, COUNT)                  \
    X(Q5_0, "q5_0", 5.5, 4.0, NONE, COUNT)                  \
    X(Q8_0, "q8_0", 8.5, 2.0, NONE, COUNT)                  \
    X(Q4_K, "q4_k", 4.5, 4.0, NONE, COUNT)                  \
    X(Q5_K, "q5_k", 5.5, 5.0, NONE, COUNT)                  \
    X(Q6_K, "q6_k", 6.5625, 4.0, NONE, COUNT)               \
    X(INT4_G32, "int4_g32", 5.0, 6.0, NONE, COUNT)          \
    X(INT4_G64, "int4_g64", 4.5, 6.0, NONE, COUNT)          \
    X(INT4_G128, "int4_g128", 4.25, 6.0, NONE, COUNT)       \
    X(INT8, "int8", 8.0, 7.0, NONE, COUNT)                  \
    X(NF4, "nf4", 4.127, 4.0, NONE, COUNT)                  \
    X(FP8, "fp8", 8.0, 1.0, NONE, COUNT)                    \
    X(Q4_0_H, "q4_0+huffman", 4.27, 3.0, Q4_0, COUNT)       \
    X(Q4_K_H, "q4_k+huffman", 4.365, 4.0, Q4_K, COUNT)      \
    X(Q6_K_H, "q6_k+huffman", 6.4125, 4.0, Q6_K, COUNT)     \
    X(NVFP4, "nvfp4", 4.5, 3.0, NONE, NVFP4)                \
    X(MXFP4, "mxfp4", 4.25, 3.0, NONE, MXFP4)               \
    X(EXL2_2_5, "exl2_2.5", 2.5, 6.0, NONE, COUNT)          \
    X(EXL2_3_0, "exl2_3.0", 3.0, 6.0, NONE, COUNT)          \
    X(EXL2_3_5, "exl2_3.5", 3.5, 6.0, NONE, COUNT)          \
    X(EXL2_4_0, "exl2_4.0", 4.0, 6.0, NONE, COUNT)          \
    X(EXL2_4_65, "exl2_4.65", 4.65, 6.0, NONE, COUNT)       \
    X(EXL2_5_0, "exl2_5.0", 5.0, 6.0, NONE, COUNT)          \
    X(EXL2_6_0, "exl2_6.0", 6.0, 6.0, NONE, COUNT)          \
    X(EXL2_8_0, "exl2_8.0", 8.0, 6.0, NONE, COUNT)

enum wfmt {
#define WFMT_ENUM_(e, n, b, d, base, mma) WF_##e,
    WFMT_MAP(WFMT_ENUM_)
#undef WFMT_ENUM_
    WFMT_COUNT
};

const char *wfmt_name(enum wfmt f);
int wfmt_from_name(const char *name, enum wfmt *out);
/* Bits per weight, scales included (0 for NONE: use the dtype). */
double wfmt_bits(enum wfmt f);
/* Vector-pipe operations per weight to dequantise it. */
double wfmt_dequant_ops(enum wfmt f);
/* An entropy-coded format's format as decoded (what a kernel reads);
 * NONE for a format that is not entropy-coded. */
enum wfmt wfmt_decoded(enum wfmt f);
/* The type a matrix pipe takes f's values as (block scales applied in the
 * MMA), or DT_COUNT where it has none: the weights are dequantised. */
enum dtype wfmt_matrix_type(enum wfmt f);

_Static_assert(WFMT_COUNT <= 32, "tload_field.c keeps the format names in 32 slots");

#endif
