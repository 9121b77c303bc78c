"""Matrix multiply-accumulate operands in shared memory: element types, the wgmma / tcgen05 matrix
descriptors, the tcgen05 instruction descriptor, and what a descriptor reads (PTX ISA 9.7.15 wgmma,
9.7.16 tcgen05: 9.7.16.3 strides and canonical layouts, 9.7.16.4 descriptors)."""
