"""The PTX descriptor evaluator behind `layoutproof ptx descriptors | check` (docs/CLI.md `ptx`).

source (reading PTX, its size limits) -> evaluate (a register environment of partly known words, bits;
instructions, semantics; branches and a loop's first iteration) -> mma (each wgmma.mma_async /
tcgen05.mma, decoded with spec.mma) -> check (against the tile an author meant, spec.cases.desc_case).
analysis.analyse is the entry point.
"""
