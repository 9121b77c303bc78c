"""The Tensor Memory Accelerator: tensor maps (CUDA Driver API: cuTensorMapEncode*), what a tiled or
im2col copy loads and where it lands, and the swizzle modes (PTX ISA 5.5 Tensors: 5.5.3 tiled, 5.5.4
im2col, 5.5.5 im2col::w, 5.5.6 interleave, 5.5.7 swizzling modes)."""
