"""Block-scaled MMA scale factors (PTX ISA 9.0 9.7.16.10.7, Block Scaling): the path of one scale factor
from the quantizer to the tensor core.

    vectors.py   which kinds take which scale vectors (.scale_vec::1X / 2X / 4X, .block32 / .block16),
                 how many elements of K one scale covers, the scale types and the scale-factor ids;
    layouts.py   where a writer puts the scale of (row, K block) in global memory: cuBLAS's interleaved
                 128 x 4 blocks (the layout CUTLASS, torchao, nvmath and Triton's tutorial share), and
                 linear K-major and MN-major scales;
    tmem.py      which tensor-memory cell and byte a block-scaled tcgen05.mma reads the scale of A's
                 row m (B's column n) from, for its scale vector and scale-factor id.

No machine here runs a block-scaled MMA: the manual, ptxas (tests/hardware/scales_ptxas_forms.json) and
CUTLASS's layouts are the evidence; each rule says which.
"""
