"""Reading compiled kernels: what `layoutproof ptx descriptors | check` (docs/CLI.md `ptx`) stands on.

    frontend/   the PTX text as the manual writes it: ptx.lark (the grammar, PTX ISA 9.0 chapters 4, 5
                and 11), grammar.py (the syntax tree; solver/fast/kernel_frontend_grammar.py the same
                tree, faster: function bodies read by a scanner of the grammar's terminals), scope.py
                (a { } block's own registers and labels), source.py (size limits, modules, functions,
                shared symbols), instruction.py (one instruction's guard, opcode and operands), cfg.py
                (basic blocks, natural loops, waits)
    concrete/   the reference executor: integers, every iteration of every loop, each warp of the CTA
                (semantics.py the meaning of each instruction; its optimised path on plain ints is
                solver/fast/kernel_concrete_semantics.py)
    symbolic/   the evaluator over partly known words (bits.py, semantics.py, evaluate.py: the first
                iteration for any launch); valuesets.py (every iteration for any launch: the values each
                register may hold); bitvector.py (the integer instructions as Z3 terms), integers.py
                (those terms over the integers), bounds.py (the few values a register computed from
                unknown inputs takes, proved by Z3)
    iterations.py  per-site summaries over the run's visits (warp roles, start patterns)
    mma.py      each wgmma.mma_async / tcgen05.mma with its operands, decoded by spec.mma
    check.py    the MMAs against the tile an author meant (spec.cases.desc_case)
    analysis.py the entry point: text -> sites, and the MMA statements not read (nothing silent); a
                file's functions in forked processes (jobs)
    collector.py  Python's cyclic garbage collector paused while modules are read and evaluated

frontend -> symbolic | concrete -> mma -> check; analysis.analyse ties them together.
"""
