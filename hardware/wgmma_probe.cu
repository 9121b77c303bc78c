// wgmma_probe: which shared-memory byte does wgmma read for each operand element?
//
// One thread block (one warpgroup) per case. The probed operand's region of shared memory is filled
// with *codes*: the element slot at absolute shared-memory address a holds a value that names a
// (one "digit" of a / element_bytes in base NCODES; enough digits over several cases name any slot).
// The other operand is one-hot (an identity block), so D = A x B copies the probed operand into the
// accumulators exactly: D[m][k] = A[m][k] when probing A, D[k][n] = B[n][k] when probing B. The
// runner (run_probe.py) turns D back into addresses.
//
// Codes are normal, finite, non-zero numbers of the operand type, so a product with 1 (and sums
// with products with 0) is exact in the f32 accumulator.
//
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o wgmma_probe wgmma_probe.cu
// Run:   wgmma_probe CASES_FILE OUT_FILE
//   CASES_FILE: uint32 count, then count x struct Case (little endian).
//   OUT_FILE:   uint32 smem_base, uint32 count, then count x 64 x N_MAX float (D, row-major, N_MAX=128).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.cuh"

enum DType : uint32_t { BF16 = 0, F16 = 1, TF32 = 2, E4M3 = 3 };

struct Case {
  uint32_t dtype;     // DType
  uint32_t trans;     // bit 0: imm-trans-a, bit 1: imm-trans-b (16-bit types only)
  uint32_t n;         // instruction N: 64 or 128
  uint32_t digit;     // which base-NCODES digit of the slot index the codes carry
  uint64_t desc_a;    // descriptors with start addresses relative to the dynamic smem base
  uint64_t desc_b;
  uint32_t onehot;    // 0: B is one-hot (probing A), 1: A is one-hot (probing B)
  uint32_t pad;
};

constexpr int SMEM_BYTES = 200 * 1024;
constexpr int PROBE_BYTES = 160 * 1024;   // [0, 160 KiB): codes
constexpr int ONEHOT_BASE = 160 * 1024;   // [160, 164 KiB): the one-hot operand, K-major, no swizzle
constexpr int ONEHOT_BYTES = 4 * 1024;
constexpr int N_MAX = 128;

__host__ __device__ constexpr int elem_bytes(uint32_t dtype) {
  return dtype == TF32 ? 4 : (dtype == E4M3 ? 1 : 2);
}

__host__ __device__ constexpr uint32_t ncodes(uint32_t dtype) {
  // bf16: sign x exponent 1..254 x 7-bit mantissa; f16: sign x 1..30 x 10 bits;
  // tf32: sign x 1..254 x 10 bits; e4m3: sign x exponent 1..15 x 3 bits, less S.1111.111 (NaN).
  return dtype == BF16 ? 2u * 254u * 128u
       : dtype == F16  ? 2u * 30u * 1024u
       : dtype == TF32 ? 2u * 254u * 1024u
       : 2u * 119u;
}

__device__ uint32_t code_bits(uint32_t dtype, uint32_t n) {
  uint32_t sign = n & 1u, rest = n >> 1;
  switch (dtype) {
    case BF16: return (sign << 15) | ((1u + rest / 128u) << 7) | (rest % 128u);
    case F16:  return (sign << 15) | ((1u + rest / 1024u) << 10) | (rest % 1024u);
    case TF32: return (sign << 31) | ((1u + rest / 1024u) << 23) | ((rest % 1024u) << 13);
    default:   return (sign << 7) | ((1u + rest / 8u) << 3) | (rest % 8u);  // e4m3, rest < 119
  }
}

__device__ uint32_t one_bits(uint32_t dtype) {
  switch (dtype) {
    case BF16: return 0x3F80u;
    case F16:  return 0x3C00u;
    case TF32: return 0x3F800000u;
    default:   return 0x38u;  // e4m3 1.0: exponent 7 (bias 7), mantissa 0
  }
}

__device__ void store_elem(uint8_t* p, int bytes, uint32_t bits) {
  for (int i = 0; i < bytes; ++i) p[i] = (uint8_t)(bits >> (8 * i));
}

// ---------------------------------------------------------------------------------------------------
// wgmma wrappers: D (f32, 64 x N) = A x B, both from shared memory through descriptors.
#define R8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
              "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define OUTS_64 R8(0), R8(8), R8(16), R8(24)
#define OUTS_128 OUTS_64, R8(32), R8(40), R8(48), R8(56)
#define REGS_64 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
               "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}"
#define REGS_128 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
               "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
               "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
               "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"

// 16-bit types take transpose immediates; tf32 and e4m3 are K-major only. DA, DB, SC, IA, IB are the
// operand numbers of desc_a, desc_b, the scale-d flag and the two transpose immediates (after the
// N/2 accumulator registers).
#define WGMMA16(N, T, DA, DB, SC, IA, IB)                                        \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" SC ", 0;\n"                             \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." T "." T " " REGS_##N        \
               ", %" DA ", %" DB ", p, 1, 1, %" IA ", %" IB ";\n}\n"                         \
               : OUTS_##N : "l"(desc_a), "l"(desc_b), "r"(0), "n"(TA), "n"(TB))

template <uint32_t DT, int N, int TA, int TB>
__device__ void mma(float* d, uint64_t desc_a, uint64_t desc_b);

#define DEFINE_MMA16_TRANS(DTV, T, N, DA, DB, SC, IA, IB, TAV, TBV)                             \
  template <> __device__ void mma<DTV, N, TAV, TBV>(float* d, uint64_t desc_a, uint64_t desc_b) { \
    constexpr int TA = TAV, TB = TBV; WGMMA16(N, T, DA, DB, SC, IA, IB); }
#define DEFINE_MMA16(DTV, T, N, DA, DB, SC, IA, IB)                                             \
  DEFINE_MMA16_TRANS(DTV, T, N, DA, DB, SC, IA, IB, 0, 0)                                       \
  DEFINE_MMA16_TRANS(DTV, T, N, DA, DB, SC, IA, IB, 0, 1)                                       \
  DEFINE_MMA16_TRANS(DTV, T, N, DA, DB, SC, IA, IB, 1, 0)                                       \
  DEFINE_MMA16_TRANS(DTV, T, N, DA, DB, SC, IA, IB, 1, 1)

DEFINE_MMA16(BF16, "bf16", 64, "32", "33", "34", "35", "36")
DEFINE_MMA16(BF16, "bf16", 128, "64", "65", "66", "67", "68")
DEFINE_MMA16(F16, "f16", 64, "32", "33", "34", "35", "36")
DEFINE_MMA16(F16, "f16", 128, "64", "65", "66", "67", "68")

#define WGMMA_KMAJOR(N, K, T, DA, DB, SC)                                         \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" SC ", 0;\n"                             \
               "wgmma.mma_async.sync.aligned.m64n" #N "k" #K ".f32." T "." T " " REGS_##N    \
               ", %" DA ", %" DB ", p, 1, 1;\n}\n"                                          \
               : OUTS_##N : "l"(desc_a), "l"(desc_b), "r"(0))

template <> __device__ void mma<TF32, 64, 0, 0>(float* d, uint64_t desc_a, uint64_t desc_b) {
  WGMMA_KMAJOR(64, 8, "tf32", "32", "33", "34"); }
template <> __device__ void mma<TF32, 128, 0, 0>(float* d, uint64_t desc_a, uint64_t desc_b) {
  WGMMA_KMAJOR(128, 8, "tf32", "64", "65", "66"); }
template <> __device__ void mma<E4M3, 64, 0, 0>(float* d, uint64_t desc_a, uint64_t desc_b) {
  WGMMA_KMAJOR(64, 32, "e4m3", "32", "33", "34"); }
template <> __device__ void mma<E4M3, 128, 0, 0>(float* d, uint64_t desc_a, uint64_t desc_b) {
  WGMMA_KMAJOR(128, 32, "e4m3", "64", "65", "66"); }

// ---------------------------------------------------------------------------------------------------
template <uint32_t DT, int N, int TA, int TB>
__global__ void __launch_bounds__(128, 1) probe(const Case* cases, const int* index, float* out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const int slot_in_file = index[blockIdx.x];
  const Case c = cases[slot_in_file];
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  constexpr int EB = elem_bytes(DT);
  constexpr int K = 32 / EB;  // one instruction reads 32 bytes of K

  // Codes: slot s (absolute address a = base + s * EB) holds digit `c.digit` of a / EB.
  uint32_t power = 1;
  for (uint32_t i = 0; i < c.digit; ++i) power *= ncodes(DT);
  for (int s = threadIdx.x; s < PROBE_BYTES / EB; s += blockDim.x) {
    uint32_t absolute_slot = (base + (uint32_t)s * EB) / EB;
    store_elem(smem + s * EB, EB, code_bits(DT, (absolute_slot / power) % ncodes(DT)));
  }
  for (int i = threadIdx.x; i < ONEHOT_BYTES; i += blockDim.x) smem[ONEHOT_BASE + i] = 0;
  __syncthreads();
  // One-hot operand (64 or N rows x K), K-major, no swizzle: row r, K element k at
  // (r % 8) * 16 + (r / 8) * 128 + ((k * EB) / 16) * 2048 + (k * EB) % 16  (SBO 128, LBO 2048).
  if (threadIdx.x < K) {
    int r = threadIdx.x, k = threadIdx.x;
    int offset = (r % 8) * 16 + (r / 8) * 128 + ((k * EB) / 16) * 2048 + (k * EB) % 16;
    store_elem(smem + ONEHOT_BASE + offset, EB, one_bits(DT));
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  const uint64_t desc_a = c.desc_a + (base >> 4);
  const uint64_t desc_b = c.desc_b + (base >> 4);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  mma<DT, N, TA, TB>(d, desc_a, desc_b);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");

  // Accumulator fragment (PTX wgmma D layout for m64nNk*): warp w owns rows 16w..16w+15;
  // register 4j+{0,1} -> row 16w + lane/4, columns 8j + 2(lane%4) + {0,1}; 4j+{2,3} -> row + 8.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* block_out = out + (size_t)blockIdx.x * 64 * N_MAX;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    int j = i / 4, row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2), col = 8 * j + 2 * (lane % 4) + (i % 2);
    block_out[row * N_MAX + col] = d[i];
  }
}

// ---------------------------------------------------------------------------------------------------
using Kernel = void (*)(const Case*, const int*, float*);

static Kernel pick(const Case& c) {
#define PICK16(DTV)                                                                     \
  if (c.dtype == DTV) {                                                                 \
    if (c.n == 64) {                                                                    \
      switch (c.trans) { case 0: return probe<DTV, 64, 0, 0>; case 1: return probe<DTV, 64, 1, 0>; \
                         case 2: return probe<DTV, 64, 0, 1>; case 3: return probe<DTV, 64, 1, 1>; } \
    } else {                                                                            \
      switch (c.trans) { case 0: return probe<DTV, 128, 0, 0>; case 1: return probe<DTV, 128, 1, 0>; \
                         case 2: return probe<DTV, 128, 0, 1>; case 3: return probe<DTV, 128, 1, 1>; } \
    }                                                                                   \
  }
  PICK16(BF16)
  PICK16(F16)
  if (c.trans == 0 && c.dtype == TF32) return c.n == 64 ? probe<TF32, 64, 0, 0> : probe<TF32, 128, 0, 0>;
  if (c.trans == 0 && c.dtype == E4M3) return c.n == 64 ? probe<E4M3, 64, 0, 0> : probe<E4M3, 128, 0, 0>;
  return nullptr;
}

__global__ void read_base(uint32_t* out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  *out = (uint32_t)__cvta_generic_to_shared(smem);
}

int main(int argc, char** argv) {
  if (argc != 3) { fprintf(stderr, "usage: %s CASES OUT\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 2; }
  uint32_t count = 0;
  if (fread(&count, 4, 1, f) != 1) { fprintf(stderr, "bad cases file\n"); return 2; }
  std::vector<Case> cases(count);
  if (fread(cases.data(), sizeof(Case), count, f) != count) { fprintf(stderr, "short cases file\n"); return 2; }
  fclose(f);

  Case* d_cases; float* d_out; int* d_index; uint32_t* d_base;
  CHECK(cudaMalloc(&d_cases, sizeof(Case) * count));
  CHECK(cudaMalloc(&d_out, sizeof(float) * 64 * N_MAX * count));
  CHECK(cudaMalloc(&d_index, sizeof(int) * count));
  CHECK(cudaMalloc(&d_base, 4));
  CHECK(cudaMemcpy(d_cases, cases.data(), sizeof(Case) * count, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_out, 0xFF, sizeof(float) * 64 * N_MAX * count));  // NaN poison: unwritten shows

  CHECK(cudaFuncSetAttribute(read_base, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
  read_base<<<1, 1, SMEM_BYTES>>>(d_base);
  CHECK(cudaGetLastError());
  uint32_t base = 0;
  CHECK(cudaMemcpy(&base, d_base, 4, cudaMemcpyDeviceToHost));

  // One launch per kernel variant, over the cases that use it; each block writes its own slice.
  std::vector<float> all((size_t)64 * N_MAX * count, 0.0f);
  std::vector<bool> done(count, false);
  for (uint32_t first = 0; first < count; ++first) {
    if (done[first]) continue;
    Kernel kernel = pick(cases[first]);
    if (!kernel) { fprintf(stderr, "case %u: no kernel for this dtype/trans/n\n", first); return 2; }
    std::vector<int> index;
    for (uint32_t i = first; i < count; ++i)
      if (!done[i] && pick(cases[i]) == kernel) { index.push_back((int)i); done[i] = true; }
    CHECK(cudaMemcpy(d_index, index.data(), sizeof(int) * index.size(), cudaMemcpyHostToDevice));
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    kernel<<<(unsigned)index.size(), 128, SMEM_BYTES>>>(d_cases, d_index, d_out);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    // This group's blocks were written in launch order: move them to their cases' slots.
    std::vector<float> group((size_t)64 * N_MAX * index.size());
    CHECK(cudaMemcpy(group.data(), d_out, sizeof(float) * group.size(), cudaMemcpyDeviceToHost));
    for (size_t b = 0; b < index.size(); ++b)
      memcpy(&all[(size_t)index[b] * 64 * N_MAX], &group[b * 64 * N_MAX], sizeof(float) * 64 * N_MAX);
    fprintf(stderr, "group of %zu cases (dtype %u, n %u, trans %u) done\n", index.size(),
            cases[first].dtype, cases[first].n, cases[first].trans);
  }
  FILE* o = fopen(argv[2], "wb");
  if (!o) { perror(argv[2]); return 2; }
  fwrite(&base, 4, 1, o);
  fwrite(&count, 4, 1, o);
  fwrite(all.data(), sizeof(float), all.size(), o);
  fclose(o);
  return 0;
}
