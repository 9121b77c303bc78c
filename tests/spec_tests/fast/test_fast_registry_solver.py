"""The solver's fast paths (solver/fast, issue 30) under spec.fast's one registry and one switch: each public
name with a fast path dispatches through the registry and runs its reference with fast paths off
(references_only); with fast paths off the executor, the PTX reader, the audit and synth take their
references (every solver fast version made to raise, they still run, and give what they gave); the
executor resolves its integer path once per warp, not per instruction; and a program that imports one
solver topic module alone gets that topic's fast path (spec.fast imports solver/fast's module by name when
first asked). tests/spec_tests/fast/test_fast_registry.py maps each solver fast version to its equality test (CHECKED_SOLVER).
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from spec import fast

from tests.spec_tests.fast.test_fast_registry import CHECKED_SOLVER, ROOT, _name

PTX = os.path.join(ROOT, "tests", "fixtures", "ptx", "triton_wgmma_f16_sw128.ptx")


class _FastVersionCalled(Exception):
    pass


def _refuse(*args, **kwargs):
    raise _FastVersionCalled()


def _solver_registry() -> dict:
    return {reference: version for reference, version in fast.registered().items()
            if version.__module__.startswith("solver.fast.")}


def _refuse_every_solver_fast_path(monkeypatch) -> None:
    for reference in _solver_registry():
        monkeypatch.setitem(fast._FAST, reference, _refuse)


# --- each public name with a fast path dispatches, and runs its reference with fast paths off ------------
def _same_term(a, b) -> bool:
    return a.eq(b)


def _same_offsets(a, b) -> bool:
    indexes = [(0, 0, 0, 0, 0), (3, 1, 0, 0, 0), (255, 1, 3, 0, 0)]
    return (a is None) == (b is None) and (a is None or [a(i) for i in indexes] == [b(i) for i in indexes])


def _same_reading(text: str):
    """Two readings apart compare by the tree each gives (None: the module read whole, by the grammar)."""
    from solver.kernel.frontend import grammar

    def tree(parts):
        return grammar.parse_with_grammar(text) if parts is None else parts.whole()
    return lambda a, b: tree(a) == tree(b)


def _dispatching():
    """(public function, its reference, the arguments of one call, how results compare) per solver fast path
    reached by a public name of its topic module."""
    from types import SimpleNamespace
    from spec.mma import dtypes
    from spec.tma import tensormap
    from solver.kernel.audit import scales
    from solver.kernel.frontend import grammar
    from solver.model import tma_swizzle
    from solver.model.bitvec import var
    from solver.synth import descriptor as synth
    from solver.synth import recipe
    layout = recipe._layout("K", "128B", 64, 64, 64)
    tile = synth.Tile("sm90", "bf16", "K", 64, 16, 16, layout, 0x400, dtypes.default_kind(dtypes.dtype("bf16")))
    desc = synth.synthesize(tile).descriptor
    table = tma_swizzle.CHUNK_TABLES["128B"]
    address = var("a")
    row, chunk = tma_swizzle.line_row(table, address), tma_swizzle.source_chunk(address)
    with open(PTX, encoding="utf-8") as handle:
        text = handle.read()
    from test_audit_scales import ENTRIES          # (the nvfp4 GEMM's scale map)
    params = tensormap.parse_params(ENTRIES["nvfp4"]["tensormaps"]["block_scaled_matmul_kernel_param_5"])
    load = SimpleNamespace(coordinates=(0, 1, 8, 3, 0))
    equal = lambda a, b: a == b          # noqa: E731
    return [
        (synth.Tile.targets, synth.Tile.targets_reference, (tile,), equal),
        (synth.ignored_fields, synth.ignored_fields_by_element, (tile, tile.targets_reference(), desc), equal),
        (tma_swizzle.destination_chunk_term, tma_swizzle.destination_chunk, (table, row, chunk), _same_term),
        (grammar.parse, grammar.parse_with_grammar, (text,), equal),
        (grammar.parse_bodies_apart, grammar.bodies_apart, (text,), _same_reading(text)),
        (scales.offset_function, scales.offset_by_element, (load, params), _same_offsets),
    ]


# reached by no public name of their own: the executor resolves its integer path once per warp
# (executor.Warp.on_ints), the audit's compose path is checked through whole audits (below), and the any-
# launch sets evaluate a term across blocks through the compiled term (bounds._evaluations)
THROUGH_RUNS = {"solver.kernel.concrete.semantics.no_integer_path",
                "solver.kernel.audit.compose.operand_dimensions_by_element",
                "solver.kernel.symbolic.bounds.term_evaluator"}


def test_every_solver_fast_path_is_reached_by_a_public_name_or_a_run():
    names = {_name(reference) for _, reference, _, _ in _dispatching()}
    assert names | THROUGH_RUNS == {_name(reference) for reference in _solver_registry()} == set(CHECKED_SOLVER)
    assert not names & THROUGH_RUNS


@pytest.mark.parametrize("index", range(6))
def test_a_public_name_dispatches_and_runs_its_reference_with_fast_paths_off(index, monkeypatch):
    public, reference, args, same = _dispatching()[index]
    version = fast.registered()[reference]
    expected = reference(*args)
    found = public(*args)
    assert same(found, version(*args)) and same(found, expected)
    monkeypatch.setitem(fast._FAST, reference, _refuse)       # the registered fast version, made to refuse
    with pytest.raises(_FastVersionCalled):
        public(*args)                                         # fast paths on: the fast version is called
    with fast.references_only():
        assert same(public(*args), expected)                  # off: the reference, never the fast version
    monkeypatch.setattr(fast, "ENABLED", False)               # the mutants' way (tests/mutants.py)
    assert same(public(*args), expected)


# --- with fast paths off, the executor, the reader, the audit and synth take their references -------------
def _audit():
    import layoutproof as lp
    from test_audit import MAPS, PARAMS, PTX as AUDIT_PTX
    with open(AUDIT_PTX, encoding="utf-8") as handle:
        return lp.audit(handle.read(), MAPS, PARAMS).document()


def test_the_executor_reader_and_audit_take_their_references_with_fast_paths_off(monkeypatch):
    """An audit reads the PTX (grammar.parse), runs the kernel (the executor, its integer path) and composes
    the reads (compose.operand_dimensions): every solver fast version refusing, it runs with fast paths off,
    and says what it says with them on."""
    from solver.kernel.audit import compose
    from solver.kernel.concrete import semantics
    from solver.kernel.frontend import grammar
    expected = _audit()
    for reference in (grammar.parse_with_grammar, semantics.no_integer_path, compose.operand_dimensions_by_element):
        with monkeypatch.context() as one:                  # each alone is reached while fast paths are on
            one.setitem(fast._FAST, reference, _refuse)
            with pytest.raises(_FastVersionCalled):
                _audit()
    _refuse_every_solver_fast_path(monkeypatch)
    with fast.references_only():
        assert _audit() == expected


def test_the_executor_takes_the_integer_path_of_the_switch_once_per_warp(monkeypatch):
    """The executor resolves its integer path once per warp of a run (executor.Warp.on_ints), never per
    instruction: spec.fast's fastest is asked about semantics.no_integer_path once per Warp made; and with
    fast paths off each warp holds the reference."""
    from solver.fast import kernel_concrete_semantics
    from solver.kernel import analysis
    from solver.kernel.concrete import executor, semantics
    asked, made, instructions = [], [], [0]
    fastest, init, run = fast.fastest, executor.Warp.__init__, kernel_concrete_semantics.run

    def counting_fastest(reference):
        if reference is semantics.no_integer_path:
            asked.append(reference)
        return fastest(reference)

    def counting_init(self, *args, **kwargs):
        made.append(self)
        init(self, *args, **kwargs)

    def counting_run(*args):
        instructions[0] += 1
        return run(*args)
    monkeypatch.setattr(fast, "fastest", counting_fastest)
    monkeypatch.setattr(executor.Warp, "__init__", counting_init)
    monkeypatch.setitem(fast._FAST, semantics.no_integer_path, counting_run)
    with open(PTX, encoding="utf-8") as handle:
        text = handle.read()
    analysis.analyse(text)
    assert made and len(asked) == len(made) < instructions[0]
    assert all(w.on_ints is counting_run for w in made)
    with fast.references_only():
        warp = executor.Warp(0, (128, 1, 1), executor.Launch(), {}, {})
    assert warp.on_ints is semantics.no_integer_path


@pytest.mark.parametrize("case", [("sm90", "bf16", "K", 64, 128, "128B"), ("sm100", "e4m3", "MN", 32, 64, "32B")],
                         ids=lambda c: "-".join(map(str, c)))
def test_synth_takes_its_references_with_fast_paths_off(case, monkeypatch):
    """A recipe (a synthesis per K step: the tile's targets, the ignored fields) with every solver fast
    version refusing: it is built with fast paths off, the same recipe; with them on, a fast version is
    called."""
    from solver.synth import recipe
    arch, dtype, major, mn, k_tile, swizzle = case
    build = lambda: recipe.as_json(recipe.build(arch, dtype, major, mn, k_tile, swizzle, 0x400))   # noqa: E731
    expected = build()
    _refuse_every_solver_fast_path(monkeypatch)
    with pytest.raises(_FastVersionCalled):
        build()
    with fast.references_only():
        assert build() == expected


# --- a solver topic module imported alone gets its fast path ----------------------------------------------
_ALONE = """
import sys
{imports}
{call}
assert {expected!r} in sys.modules, sorted(m for m in sys.modules if m.startswith("solver.fast"))
assert not any(name in sys.modules for name in {unrelated!r}), sorted(m for m in sys.modules if ".fast." in m)
"""

ALONE = [
    ("from solver.kernel.frontend import grammar", f"grammar.parse(open({PTX!r}).read())",
     "solver.fast.kernel_frontend_grammar"),
    ("from solver.kernel.concrete import executor",
     "executor.Warp(0, (32, 1, 1), executor.Launch(), {}, {})", "solver.fast.kernel_concrete_semantics"),
    ("from solver.synth import descriptor as synth",
     "synth.make_tile('sm90', 'bf16', 'K', 64, 'Sw<3,4,3> o (64,64):(64,1)', 0x400).targets()",
     "solver.fast.synth_descriptor"),
]


@pytest.mark.parametrize("imports, call, expected", ALONE, ids=[a[2] for a in ALONE])
def test_a_solver_topic_module_imported_alone_gets_its_fast_path(imports, call, expected):
    unrelated = ["solver.fast.model_tma_swizzle" if "model" not in expected else "solver.fast.synth_descriptor"]
    code = _ALONE.format(imports=imports, call=call, expected=expected, unrelated=unrelated)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
