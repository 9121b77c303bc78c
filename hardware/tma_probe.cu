// tma_probe: where does a tiled TMA load (cp.async.bulk.tensor.2d) put each element of its box?
//
// The global tensor (2-D, G0 x G1 elements of 1, 2 or 4 bytes) holds codes: element i holds digit
// `digit` of (i + 1) in base 2^(8 * element_bytes) (0 is what out-of-bounds elements are filled
// with). One load per case writes the box into shared memory at a chosen offset from a 1024-aligned
// base; the whole 16 KiB window is copied out (poisoned with 0xA5 before the load), and the runner
// (run_tma_probe.py) finds where each box element landed.
//
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o tma_probe tma_probe.cu -lcuda
// Run:   tma_probe CASES_FILE OUT_FILE
//   CASES_FILE: uint32 count, then count x struct Case.
//   OUT_FILE:   uint32 count, then per case: int32 encode_status, uint32 smem_base, WINDOW bytes.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>

#include "check.cuh"

struct Case {
  uint32_t element_bytes;  // 1, 2 or 4
  uint32_t swizzle;        // CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B
  uint32_t global_dim[2];  // elements
  uint32_t box[2];         // elements
  int32_t coord[2];        // box origin (may be negative or run past the tensor)
  uint32_t smem_offset;    // destination offset from the 1024-aligned base (multiple of 128)
  uint32_t digit;          // which base-2^(8 * element_bytes) digit of (index + 1) the tensor holds
};

constexpr int WINDOW = 16 * 1024;
constexpr int SMEM_BYTES = WINDOW + 1024 + 64;

__global__ void load_box(const __grid_constant__ CUtensorMap map, Case c, uint8_t* out, uint32_t* base_out) {
  extern __shared__ uint8_t raw[];
  // a 1024-aligned window inside the dynamic allocation, then the mbarrier after it
  uint32_t raw_addr = (uint32_t)__cvta_generic_to_shared(raw);
  uint32_t pad = (1024 - raw_addr % 1024) % 1024;
  uint8_t* window = raw + pad;
  uint32_t window_addr = raw_addr + pad;
  uint32_t bar_addr = window_addr + WINDOW;
  for (int i = threadIdx.x; i < WINDOW; i += blockDim.x) window[i] = 0xA5;
  if (threadIdx.x == 0) {
    *base_out = window_addr;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(bar_addr));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t bytes = c.box[0] * c.box[1] * c.element_bytes;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar_addr), "r"(bytes) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
        :: "r"(window_addr + c.smem_offset), "l"(&map), "r"(c.coord[0]), "r"(c.coord[1]), "r"(bar_addr)
        : "memory");
    asm volatile(
        "{\n.reg .pred done;\nwait:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
        "@!done bra wait;\n}\n" :: "r"(bar_addr) : "memory");
  }
  __syncthreads();
  for (int i = threadIdx.x; i < WINDOW; i += blockDim.x) out[i] = window[i];
}

int main(int argc, char** argv) {
  if (argc != 3) { fprintf(stderr, "usage: %s CASES OUT\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "rb");
  uint32_t count = 0;
  if (!f || fread(&count, 4, 1, f) != 1) { fprintf(stderr, "bad cases file\n"); return 2; }
  std::vector<Case> cases(count);
  if (fread(cases.data(), sizeof(Case), count, f) != count) { fprintf(stderr, "short cases file\n"); return 2; }
  fclose(f);
  CHECK(cudaFree(0));
  CHECK(cudaFuncSetAttribute(load_box, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
  uint8_t *d_out, *d_global;
  uint32_t* d_base;
  CHECK(cudaMalloc(&d_out, WINDOW));
  CHECK(cudaMalloc(&d_base, 4));
  CHECK(cudaMalloc(&d_global, 256 * 256 * 4));
  std::vector<uint8_t> host_global(256 * 256 * 4), window(WINDOW);
  FILE* o = fopen(argv[2], "wb");
  fwrite(&count, 4, 1, o);
  for (uint32_t n = 0; n < count; ++n) {
    const Case& c = cases[n];
    uint64_t elements = (uint64_t)c.global_dim[0] * c.global_dim[1];
    for (uint64_t i = 0; i < elements; ++i) {
      uint64_t code = (i + 1) >> (8 * c.element_bytes * c.digit);
      for (uint32_t b = 0; b < c.element_bytes; ++b) host_global[i * c.element_bytes + b] = (uint8_t)(code >> (8 * b));
    }
    CHECK(cudaMemcpy(d_global, host_global.data(), elements * c.element_bytes, cudaMemcpyHostToDevice));
    CUtensorMap map;
    CUtensorMapDataType type = c.element_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                             : c.element_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_INT32;
    cuuint64_t dims[2] = {c.global_dim[0], c.global_dim[1]};
    cuuint64_t strides[1] = {(cuuint64_t)c.global_dim[0] * c.element_bytes};
    cuuint32_t box[2] = {c.box[0], c.box[1]};
    cuuint32_t estrides[2] = {1, 1};
    CUresult status = cuTensorMapEncodeTiled(&map, type, 2, d_global, dims, strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                             (CUtensorMapSwizzle)c.swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    int32_t encoded = (int32_t)status;
    uint32_t base = 0;
    std::fill(window.begin(), window.end(), 0);
    if (status == CUDA_SUCCESS) {
      load_box<<<1, 128, SMEM_BYTES>>>(map, c, d_out, d_base);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpy(window.data(), d_out, WINDOW, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(&base, d_base, 4, cudaMemcpyDeviceToHost));
    }
    fwrite(&encoded, 4, 1, o);
    fwrite(&base, 4, 1, o);
    fwrite(window.data(), 1, WINDOW, o);
  }
  fclose(o);
  fprintf(stderr, "%u cases done\n", count);
  return 0;
}
