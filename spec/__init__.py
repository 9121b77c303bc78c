"""The executable specification: what the hardware does with a tensor on its way from global memory to
the tensor cores, one step per module, each step a function you can run and a set of rules it obeys.

Read it the way LinearLayout.h teaches its model: every step is a map from the coordinates of one space
to the addresses (or coordinates) of the next, and the whole pipeline is their composition.

  global tensor (globalDim, globalStrides: a strided layout of bytes)
      |   spec/tma/tensormap_params  the encoder's arguments as cuda.h names them (CUtensorMap*)
      |   spec/tma/tensormap         the rules those arguments obey, one block each (PTX ISA 5.5,
      |                              CUDA Driver API: cuTensorMapEncode*); spec/tma/driver says which
      |                              the driver enforces on each architecture
      v
  TMA box: which elements one copy brings
      |   spec/tma/place             a tiled box, row by row, dimension 0 fastest (PTX ISA 5.5.3)
      |   spec/tma/im2col            the im2col, im2col::w and im2col::w::128 walks (PTX ISA 5.5.4, 5.5.5)
      v
  swizzled shared memory: byte address -> byte address
      |   spec/tma/swizzle           the TMA swizzle tables, by absolute address (PTX ISA 5.5.7)
      |   spec/cute/swizzle          CuTe's Swizzle<B,M,S> and the descriptor swizzles (cute/swizzle.hpp)
      |   spec/cute/layout, notation CuTe layouts shape:stride and their text form (CuTe docs)
      v
  descriptor: the 64-bit word an MMA reads shared memory through
      |   spec/mma/descriptor        wgmma and tcgen05 shared-memory descriptors (PTX ISA 9.7.15.5.1.2.2,
      |                              9.7.16.4.1 Table 40)
      |   spec/mma/instr_desc        the tcgen05 instruction descriptor (PTX ISA 9.7.16.4.2 Tables 42-44)
      |   spec/mma/shape             tcgen05.mma's M x N x K per kind and .cta_group (PTX ISA 9.7.16.2.1
      |                              Table 39; 9.7.16.10.1 Table 52)
      |   spec/mma/dtypes            element types, packing, instruction K
      v
  read map: (mn, k) of the operand -> shared-memory byte address
          spec/mma/readmap           what a descriptor reads (PTX ISA 9.7.16.3; the H100's wgmma reads)
          spec/mma/canonical         the canonical layouts of PTX ISA 9.7.16.3.3

The cases tie the steps together (spec/cases): a desc case is a tile layout and the descriptor that
should read it (does every element come from where the tile holds it?); a recipe case is the TMA boxes
that fill a tile and the descriptors of each MMA along K (does every element read come from where a box
wrote it?).

Tensor memory is the tcgen05 tensor core's own space (spec/tmem): 128 lanes x 512 columns of 32-bit
cells per CTA, filled from registers by tcgen05.st, from shared memory by tcgen05.cp (through a
shared-memory descriptor: the read map above), and by tcgen05.mma's accumulator; read back into
registers by tcgen05.ld, whose fragment map (thread, register, 16-bit half) -> (lane, column, half) is
what an epilogue is written against. Its static forms are ptxas's to decide (recorded); its run-time
rules only a Blackwell GPU could decide, and none is available here.

Where a definition is too slow for real sizes, spec/fast holds a faster function that computes the same
thing another way (by rows, by a period's table), one module per topic module, registered against the
definition; the topic module's public name dispatches to it while spec.fast's one switch is on.

Every rule lives in spec/rule.py's record (statement, primary source, evidence, enforcer, where it is
defined) next to its check; spec/rules.py is the whole catalogue, with the ids retired by merges
(spec/rule_aliases.json, CHANGES.md).
"""
