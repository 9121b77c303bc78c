// tma_probe: where does a TMA tensor load (tiled or im2col, rank 2..5) put each element in shared memory?
//
// The global tensor (dims[0] fastest, packed) holds codes: element i holds digit `digit` of (i + 1) in
// base 2^(8 * element_bytes) (a fill writes 0, or the NaN pattern with the NaN fill). One load per case
// writes into shared memory at `smem_offset` from a 1024-aligned base; the whole window (poisoned with
// 0xA5 first) is copied out, and run_tma_probe.py reads back which code landed where.
//
// A case whose load traps (an illegal-instruction or similar error poisons the CUDA context) is recorded
// with its error and the program exits with status 3; the runner starts it again after that case.
// A load that never completes its mbarrier is recorded as a timeout (the wait is bounded).
//
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o tma_probe tma_probe.cu -lcuda
// Run:   tma_probe CASES_FILE OUT_FILE FIRST_CASE
//   CASES_FILE: uint32 count, then count x struct Case.
//   OUT_FILE (appended): per case from FIRST_CASE: int32 encode_status, int32 run_status,
//                        uint32 smem_base, WINDOW bytes.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>

#include "check.cuh"

struct Case {
  uint32_t mode;            // 0 tiled, 1 im2col
  uint32_t rank;            // 2..5 (tiled), 3..5 (im2col)
  uint32_t data_type;       // CUtensorMapDataType
  uint32_t element_bytes;   // 1, 2 or 4
  uint32_t swizzle;         // CUtensorMapSwizzle
  uint32_t oob_fill;        // CUtensorMapFloatOOBfill
  uint32_t global_dim[5];   // elements
  uint32_t box[5];          // tiled: boxDim
  uint32_t element_strides[5];
  int32_t coord[5];         // tensor coordinates of the instruction
  int32_t lower[3];         // im2col: pixelBoxLowerCorner (W, H, D)
  int32_t upper[3];         // im2col: pixelBoxUpperCorner
  uint32_t channels;        // im2col: channelsPerPixel
  uint32_t pixels;          // im2col: pixelsPerColumn
  uint32_t offsets[3];      // im2col: the instruction's im2col offsets (W, H, D)
  uint32_t expect_bytes;    // what the load should deliver (the mbarrier's transaction count)
  uint32_t smem_offset;     // destination offset from the 1024-aligned base
  uint32_t digit;           // which base-2^(8 * element_bytes) digit of (index + 1) the tensor holds
};

constexpr int WINDOW = 32 * 1024;
constexpr int SMEM_BYTES = WINDOW + 1024 + 64;
constexpr long long GLOBAL_BYTES = 1 << 20;

__device__ void issue(const CUtensorMap* map, const Case& c, uint32_t dst, uint32_t bar) {
  const int* x = c.coord;
  const unsigned short o0 = c.offsets[0], o1 = c.offsets[1], o2 = c.offsets[2];
  if (c.mode == 0) {
    switch (c.rank) {
      case 2: asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                           :: "r"(dst), "l"(map), "r"(x[0]), "r"(x[1]), "r"(bar) : "memory"); break;
      case 3: asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                           :: "r"(dst), "l"(map), "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(bar) : "memory"); break;
      case 4: asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                           :: "r"(dst), "l"(map), "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(bar) : "memory"); break;
      default: asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                            :: "r"(dst), "l"(map), "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(bar) : "memory"); break;
    }
  } else {
    switch (c.rank) {
      case 3: asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5], {%6};"
                           :: "r"(dst), "l"(map), "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(bar), "h"(o0) : "memory"); break;
      case 4: asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
                           :: "r"(dst), "l"(map), "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(bar), "h"(o0), "h"(o1) : "memory"); break;
      default: asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10};"
                            :: "r"(dst), "l"(map), "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(bar), "h"(o0), "h"(o1), "h"(o2) : "memory"); break;
    }
  }
}

__global__ void load_box(const __grid_constant__ CUtensorMap map, Case c, uint8_t* out, uint32_t* info) {
  extern __shared__ uint8_t raw[];
  uint32_t raw_addr = (uint32_t)__cvta_generic_to_shared(raw);
  uint32_t pad = (1024 - raw_addr % 1024) % 1024;
  uint8_t* window = raw + pad;
  uint32_t window_addr = raw_addr + pad;
  uint32_t bar_addr = window_addr + WINDOW;
  for (int i = threadIdx.x; i < WINDOW; i += blockDim.x) window[i] = 0xA5;
  if (threadIdx.x == 0) {
    info[0] = window_addr;
    info[1] = 0;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar_addr), "r"(c.expect_bytes) : "memory");
    issue(&map, c, window_addr + c.smem_offset, bar_addr);
    uint32_t done = 0;
    long long start = clock64();
    while (!done && clock64() - start < 2000000000LL) {  // about a second
      asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}"
                   : "=r"(done) : "r"(bar_addr) : "memory");
    }
    info[1] = done ? 0 : 1;  // 1: the transaction count never completed (timeout)
  }
  __syncthreads();
  for (int i = threadIdx.x; i < WINDOW; i += blockDim.x) out[i] = window[i];
}

static CUresult encode(CUtensorMap* map, const Case& c, void* global) {
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], estrides[5];
  cuuint64_t stride = c.element_bytes;
  for (uint32_t i = 0; i < c.rank; ++i) {
    dims[i] = c.global_dim[i];
    box[i] = c.box[i];
    estrides[i] = c.element_strides[i];
    if (i > 0) strides[i - 1] = stride;
    stride *= c.global_dim[i];
  }
  if (c.mode == 0)
    return cuTensorMapEncodeTiled(map, (CUtensorMapDataType)c.data_type, c.rank, global, dims, strides, box, estrides,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, (CUtensorMapSwizzle)c.swizzle,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE, (CUtensorMapFloatOOBfill)c.oob_fill);
  return cuTensorMapEncodeIm2col(map, (CUtensorMapDataType)c.data_type, c.rank, global, dims, strides, c.lower, c.upper,
                                 c.channels, c.pixels, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                 (CUtensorMapSwizzle)c.swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                 (CUtensorMapFloatOOBfill)c.oob_fill);
}

int main(int argc, char** argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s CASES OUT FIRST_CASE\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "rb");
  uint32_t count = 0;
  if (!f || fread(&count, 4, 1, f) != 1) { fprintf(stderr, "bad cases file\n"); return 2; }
  std::vector<Case> cases(count);
  if (fread(cases.data(), sizeof(Case), count, f) != count) { fprintf(stderr, "short cases file\n"); return 2; }
  fclose(f);
  uint32_t first = (uint32_t)atoi(argv[3]);
  CHECK(cudaFree(0));
  CHECK(cudaFuncSetAttribute(load_box, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
  uint8_t *d_out, *d_global;
  uint32_t* d_info;
  CHECK(cudaMalloc(&d_out, WINDOW));
  CHECK(cudaMalloc(&d_info, 8));
  CHECK(cudaMalloc(&d_global, GLOBAL_BYTES));
  std::vector<uint8_t> host_global(GLOBAL_BYTES), window(WINDOW);
  FILE* o = fopen(argv[2], "ab");
  for (uint32_t n = first; n < count; ++n) {
    const Case& c = cases[n];
    uint64_t elements = 1;
    for (uint32_t i = 0; i < c.rank; ++i) elements *= c.global_dim[i];
    if (elements * c.element_bytes > (uint64_t)GLOBAL_BYTES) { fprintf(stderr, "case %u: tensor too large\n", n); return 2; }
    for (uint64_t i = 0; i < elements; ++i) {
      uint64_t code = (i + 1) >> (8 * c.element_bytes * c.digit);
      for (uint32_t b = 0; b < c.element_bytes; ++b) host_global[i * c.element_bytes + b] = (uint8_t)(code >> (8 * b));
    }
    CHECK(cudaMemcpy(d_global, host_global.data(), elements * c.element_bytes, cudaMemcpyHostToDevice));
    CUtensorMap map;
    CUresult status = encode(&map, c, d_global);
    int32_t encoded = (int32_t)status, run_status = 0;
    uint32_t info[2] = {0, 0};
    std::fill(window.begin(), window.end(), 0);
    if (status == CUDA_SUCCESS) {
      load_box<<<1, 128, SMEM_BYTES>>>(map, c, d_out, d_info);
      cudaError_t err = cudaGetLastError();
      if (err == cudaSuccess) err = cudaDeviceSynchronize();
      if (err == cudaSuccess) err = cudaMemcpy(window.data(), d_out, WINDOW, cudaMemcpyDeviceToHost);
      if (err == cudaSuccess) err = cudaMemcpy(info, d_info, 8, cudaMemcpyDeviceToHost);
      run_status = err == cudaSuccess ? (info[1] ? -1 : 0) : (int32_t)err;
      if (err != cudaSuccess) {
        fwrite(&encoded, 4, 1, o); fwrite(&run_status, 4, 1, o); fwrite(&info[0], 4, 1, o); fwrite(window.data(), 1, WINDOW, o);
        fclose(o);
        fprintf(stderr, "case %u: %s\n", n, cudaGetErrorString(err));
        return 3;
      }
    }
    fwrite(&encoded, 4, 1, o); fwrite(&run_status, 4, 1, o); fwrite(&info[0], 4, 1, o); fwrite(window.data(), 1, WINDOW, o);
  }
  fclose(o);
  fprintf(stderr, "cases %u..%u done\n", first, count);
  return 0;
}
