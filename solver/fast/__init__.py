"""The solver side's fast paths: one module per solver topic module, named after it below `solver.`, dots as
underscores (spec.fast.fast_module_name):

    synth_descriptor.py            solver/synth/descriptor.py         Tile.targets_reference, ignored_fields_by_element
    model_tma_swizzle.py           solver/model/tma_swizzle.py        destination_chunk
    kernel_concrete_semantics.py   solver/kernel/concrete/semantics.py  no_integer_path (the executor's integer path)
    kernel_frontend_grammar.py     solver/kernel/frontend/grammar.py  parse_with_grammar (the fast PTX reader),
                                                                      bodies_apart (its bodies read one by one)
    kernel_audit_compose.py        solver/kernel/audit/compose.py     operand_dimensions_by_element
    kernel_audit_scales.py         solver/kernel/audit/scales.py      offset_by_element

The topic module keeps the definition (the reference) and the public name; a public name with a fast path
dispatches, `fastest(reference)(...)`. Each fast version is registered against its reference with
spec.fast's decorator, `@fast_version_of(reference)`, in spec.fast's one registry, so spec.fast's one switch
(ENABLED, references_only(); tests/mutants.py turns it off) turns the solver's fast paths off with spec's.

Registration does not depend on import order: spec.fast.fastest(reference) imports the fast module named
after the reference's module (solver.X.Y -> solver.fast.X_Y) the first time it is asked about that module,
by name at call time (importlib: spec imports nothing of solver), and spec.fast.registered() imports every
module of this package. Imports go one way: a fast module imports its topic module and spec.fast; no topic
module imports a fast module (tests/spec_tests/fast/test_fast_registry.py). A caller on a hot path resolves the function
once and keeps it (the executor resolves its integer path once per warp of a run: executor.Warp.on_ints).
tests/spec_tests/fast/test_fast_registry.py maps each registered fast version to the test that compares it with its
reference; tests/spec_tests/fast/test_fast_registry_solver.py checks that the public names dispatch, and that with fast
paths off the executor, the reader and synth take their references.
"""
