"""Tensor memory: the 5th-generation tensor core's own memory (PTX ISA 9.7.16.1), and the tcgen05
instructions that move data between it and registers or manage it (PTX ISA 9.7.16.7, 9.7.16.8).

  address       a 32-bit tensor-memory address: lane in bits 31-16, column in bits 15-0; 128 lanes x
                512 columns of 32-bit cells per CTA (9.7.16.1, 9.7.16.1.1); which lanes a warp may
                touch (9.7.16.8.1 Access restrictions)
  ld_st         tcgen05.ld / tcgen05.st / tcgen05.ld.red: shapes, .num (Table 49), registers per thread,
                and the fragment map: which 16-bit half of which cell each register piece of each
                thread comes from or goes to (9.7.16.2.3, 9.7.16.8.2-9.7.16.8.4)
  instruction   one tcgen05 instruction as PTX text: parse it, and check it for a target: what ptxas
                refuses, and what it lets through that is undefined at run time
  alloc         tcgen05.alloc / dealloc / relinquish_alloc_permit, and a checker over a kernel's
                sequence of allocation operations (9.7.16.1.2, 9.7.16.7.1)
  cp            tcgen05.cp: shapes, multicast, decompression, the cells written (and in the peer CTA),
                which shared-memory bytes each comes from (9.7.16.9.1)
  shift         tcgen05.shift.down: the implicit .31x256b shape, which rows move (9.7.16.9.2)
  accumulator   where tcgen05.mma keeps D: the data-path layouts A-G by M, cta_group, .ws (9.7.16.10.5)

Evidence. The manual's figures of the fragment layouts (Figures 183-187) and of packing (Figure 193) are
images; the maps here follow the CuTe layouts that CUTLASS states for its SM100_TMEM_LOAD/STORE atoms
(include/cute/atom/copy_traits_sm100.hpp, include/cute/arch/copy_sm100.hpp), which agree with every
count the manual's text gives. The static forms (shape, .num, register count, qualifiers, targets) were
compared with what ptxas 13.0 accepts. Nothing in tensor memory can be decided by hardware here: no
machine available to this project runs tcgen05 (its only GPU is an H100, sm_90a), so every run-time rule
(lane quarters, address ranges, allocation at run time) rests on the manual's text, and rules marked
evidence="interpretation" are readings that a Blackwell GPU could later confirm or overturn.
"""
