"""CuTe: layouts (shape:stride), their text notation and Swizzle<B,M,S> (CuTe docs 01_layout.md,
0z_tma_tensors.md; CUTLASS cute/layout.hpp, cute/swizzle.hpp)."""
