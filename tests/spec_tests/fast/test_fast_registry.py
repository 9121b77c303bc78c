"""spec.fast, the registry of the fast paths (issue 30): every registered fast version, spec's (spec/fast) and
the solver's (solver/fast), is compared with its reference by an equality test named here; each public name
of spec with a fast path dispatches through the registry, and runs its reference with fast paths off
(references_only; the solver's: tests/spec_tests/fast/test_fast_registry_solver.py); a program that imports one topic
module alone gets that topic's fast path (the fast modules are imported by spec.fast when first asked for,
whatever the caller imported); and the fast modules import their topic modules, never the other way."""
from __future__ import annotations

import ast
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import os
import subprocess
import sys

import pytest

from spec import fast

ROOT = ROOT_DIR

# reference (module.qualname) -> the equality test that compares its fast version (in spec/fast) with it
CHECKED = {
    "spec.tma.swizzle.swizzle_byte_addresses_by_element":
        "tests/spec_tests/fast/test_fast_paths.py::test_swizzle_batch_exhaustive_over_small_addresses",
    "spec.tma.swizzle.no_period_deltas": "tests/spec_tests/fast/test_fast_paths.py::test_period_table_is_the_definition",
    "spec.tma.place.place": "tests/spec_tests/fast/test_fast_paths.py::test_place_rows_is_place",
    "spec.tma.im2col.placement_rows_by_element": "tests/spec_tests/fast/test_fast_paths.py::test_im2col_placement_fast_paths",
    "spec.tma.im2col.placement_json_by_element": "tests/spec_tests/fast/test_fast_paths.py::test_im2col_placement_fast_paths",
    "spec.cute.notation.parse_layout_by_characters": "tests/spec_tests/fast/test_cute_fast.py::test_any_text_parses_as_the_reference",
    "spec.cute.layout.Layout.__call__": "tests/spec_tests/fast/test_cute_fast.py::test_evaluate_is_the_layout",
    "spec.mma.readmap.mn_parts_by_element": "tests/spec_tests/fast/test_desc_fast.py::test_first_misread_on_drawn_cases",
    "spec.mma.readmap.k_parts_by_element": "tests/spec_tests/fast/test_desc_fast.py::test_first_misread_on_drawn_cases",
    "spec.mma.readmap.swizzle_row_by_element": "tests/spec_tests/fast/test_desc_fast.py::test_first_misread_on_drawn_cases",
    "spec.mma.readmap.first_misread_by_element": "tests/spec_tests/fast/test_fast_paths.py::test_first_misread_is_the_first_difference",
    "spec.cases.desc_case.first_misread_by_element": "tests/spec_tests/fast/test_desc_fast.py::test_first_misread_on_drawn_cases",
    "spec.cases.recipe_case.first_misread_by_element":
        "tests/spec_tests/fast/test_recipe_fast.py::test_fast_paths_are_the_reference_on_drawn_cases",
}
# the same, for the solver's fast paths (in solver/fast, registered in spec.fast's one registry)
CHECKED_SOLVER = {
    "solver.synth.descriptor.Tile.targets_reference": "tests/spec_tests/fast/test_fast_paths.py::test_tile_targets_is_reference",
    "solver.synth.descriptor.ignored_fields_by_element":
        "tests/solver_tests/synth/test_synth_fast.py::test_ignored_fields_by_read_map_parts_are_the_element_check",
    "solver.model.tma_swizzle.destination_chunk":
        "tests/solver_tests/prove/test_tma_properties.py::test_cached_destination_chunk_is_the_built_term",
    "solver.kernel.concrete.semantics.no_integer_path":
        "tests/solver_tests/kernel/test_kernel_fast_semantics.py::test_runs_and_sets_are_the_same_with_the_fast_path",
    "solver.kernel.frontend.grammar.parse_with_grammar":
        "tests/solver_tests/kernel/test_kernel_fast_reader.py::test_the_fast_reader_gives_the_grammars_tree",
    "solver.kernel.frontend.grammar.bodies_apart":
        "tests/solver_tests/kernel/test_kernel_fast_reader.py::test_the_bodies_read_apart_are_the_grammars",
    "solver.kernel.audit.compose.operand_dimensions_by_element":
        "tests/solver_tests/kernel/test_audit.py::test_the_optimised_same_k_gives_the_reference_report",
    "solver.kernel.audit.scales.offset_by_element":
        "tests/solver_tests/kernel/test_audit_scales.py::test_the_affine_offset_is_the_global_elements_offset",
    "solver.kernel.symbolic.bounds.term_evaluator":
        "tests/solver_tests/kernel/test_kernel_bounds.py::test_the_compiled_term_gives_z3s_values",
}
# the same, for the fast versions registered where they are defined (outside spec/fast, solver/fast): none now
CHECKED_ELSEWHERE: dict = {}
PACKAGES = {"spec": "spec.fast.", "solver": "solver.fast."}     # each side's fast package


def _name(function) -> str:
    return f"{function.__module__}.{function.__qualname__}"


def _registry() -> dict:
    """{reference name: fast version}, with the modules that register their own fast paths imported."""
    return {_name(reference): version for reference, version in fast.registered().items()}


def _test_functions(path: str) -> set:
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_every_registered_fast_path_is_compared_with_its_reference():
    """The registry (every module of spec/fast and solver/fast imported, and the modules that register their
    own) is CHECKED and CHECKED_SOLVER, plus those of CHECKED_ELSEWHERE that are registered now; each names an
    equality test there is."""
    registry = _registry()
    in_spec_fast = {name for name, version in registry.items() if version.__module__.startswith("spec.fast.")}
    in_solver_fast = {name for name, version in registry.items() if version.__module__.startswith("solver.fast.")}
    assert sorted(in_spec_fast) == sorted(CHECKED)
    assert sorted(in_solver_fast) == sorted(CHECKED_SOLVER)
    assert sorted(set(registry) - in_spec_fast - in_solver_fast - set(CHECKED_ELSEWHERE)) == []
    for name in registry:
        path, _, function = {**CHECKED, **CHECKED_SOLVER, **CHECKED_ELSEWHERE}[name].partition("::")
        assert function in _test_functions(path), (name, path, function)


@pytest.mark.parametrize("side", sorted(PACKAGES))
def test_each_fast_module_is_named_after_its_topic_and_registers_only_its_references(side):
    """fastest imports the fast module named after the reference's module (spec.fast.fast_module_name, in
    the fast package of the reference's side): every reference a module of spec/fast (solver/fast) registers
    lives in the spec (solver) topic module it is named after."""
    registry = fast.registered()
    assert fast.modules(side) and side in fast.SIDES
    for name in fast.modules(side):
        module = sys.modules[f"{side}.fast.{name}"]
        mine = [reference for reference, version in registry.items() if version.__module__ == module.__name__]
        assert mine, name
        assert {fast.fast_module_name(reference.__module__) for reference in mine} == {name}
        assert {reference.__module__.split(".")[0] for reference in mine} == {side}


def test_the_fast_modules_import_their_topics_and_no_topic_imports_them():
    """The imports go one way (tests/cli_tests/test_architecture.py finds no cycle): a fast module imports the topic
    module of the references it registers; no module outside spec/fast (solver/fast) imports one of its
    modules."""
    from cli_tests.test_architecture import import_graph    # (tests/ is on sys.path: tests/conftest.py)
    graph = import_graph()
    for reference, version in fast.registered().items():
        if version.__module__.startswith(tuple(PACKAGES.values())):
            assert graph.has_edge(version.__module__, reference.__module__), (version.__module__, reference.__module__)
    for prefix in PACKAGES.values():
        bad = [(m, t) for m, t in graph.edges if t.startswith(prefix) and not m.startswith(prefix)]
        assert bad == []


# --- each public name with a fast path dispatches, and runs its reference with fast paths off ------------
def _dispatching():
    """(public function, its reference, the arguments of one call) for each fast path of spec/fast."""
    from spec.cases import desc_case, recipe_case
    from spec.cute import layout as cute_layout, notation
    from spec.mma import descriptor, readmap
    from spec.tma import im2col, place as tma_place, swizzle as tma_swizzle
    box = tma_place.make_box("128B", 2, (64, 4), 0x480)
    load = im2col.make_load("im2col", (16, 4, 4, 1), (-1, -1), (0, 0), 16, 8, (0, 0, 0, 0), elem_bytes=2,
                            swizzle="64B", smem_address=0x400)
    layout = cute_layout.Layout(((2, 4), 8), ((8, 1), 16))
    op = readmap.make_operand(descriptor.decode("sm90", 0x4000004000010040), "bf16", "K", 16)
    wrong = [list(row) for row in readmap.read_addresses(op)]
    wrong[9][3] += 16
    case = desc_case.parse_case({"descriptor": "0x4000004000010040", "dtype": "bf16", "major": "K", "mn": 16,
                                 "layout": "Sw<3,4,3> o ((8,2),64):((64,512),1)", "start_address": 0x420},
                                "sm90")
    recipe = recipe_case.parse_case({"dtype": "bf16", "major": "K", "mn": 16, "k_tile": 64, "smem_address": 0x400,
                                     "tma": {"swizzle": "128B", "boxDim": [64, 16], "box_count": 1,
                                             "box_stride_bytes": 2048},
                                     "descriptors": [{"k_offset": 16 * j, "descriptor": hex(0x4000004000010040 + 2 * j)}
                                                     for j in range(4)]}, "sm90")
    return [
        (tma_swizzle.swizzle_byte_addresses, tma_swizzle.swizzle_byte_addresses_by_element,
         ("128B", list(range(0x400, 0x800, 16)))),
        (tma_swizzle.period_deltas, tma_swizzle.no_period_deltas, ("64B",)),
        (tma_place.place_rows, tma_place.place, (box,)),
        (im2col.placement_rows, im2col.placement_rows_by_element, (load,)),
        (im2col.placement_json, im2col.placement_json_by_element, (load,)),
        (notation.parse_layout, notation.parse_layout_by_characters, ("Sw<3,4,3> o (8,64):(64,1)",)),
        (cute_layout.evaluate, cute_layout.Layout.__call__, (layout, 5, 3)),
        (readmap.mn_parts, readmap.mn_parts_by_element, (op,)),
        (readmap.k_parts, readmap.k_parts_by_element, (op,)),
        (readmap.swizzle_row, readmap.swizzle_row_by_element, (op, 0x480, [0, 16, 128, 272])),
        (readmap.first_misread, readmap.first_misread_by_element, (op, wrong)),
        (desc_case.first_misread, desc_case.first_misread_by_element, (case,)),
        (recipe_case.first_misread, recipe_case.first_misread_by_element, (recipe,)),
    ]


class _FastVersionCalled(Exception):
    pass


def _refuse(*args, **kwargs):
    raise _FastVersionCalled()


def test_every_fast_path_of_spec_fast_has_a_dispatching_public_name():
    names = {_name(reference) for _, reference, _ in _dispatching()}
    assert names == {_name(reference) for reference, version in fast.registered().items()
                     if version.__module__.startswith("spec.fast.")}


@pytest.mark.parametrize("index", range(13))
def test_a_public_name_dispatches_and_runs_its_reference_with_fast_paths_off(index, monkeypatch):
    public, reference, args = _dispatching()[index]
    from spec.tma import swizzle as tma_swizzle
    version = fast.registered()[reference]
    expected = reference(*args)
    found = public(*args)
    assert found == version(*args)
    if reference is not tma_swizzle.no_period_deltas:       # (the definitions keep no table: None)
        assert found == expected
    monkeypatch.setitem(fast._FAST, reference, _refuse)       # the registered fast version, made to refuse
    with pytest.raises(_FastVersionCalled):
        public(*args)                                         # fast paths on: the fast version is called
    with fast.references_only():
        assert public(*args) == expected                      # off: the reference, never the fast version
    monkeypatch.setattr(fast, "ENABLED", False)               # the mutants' way (tests/mutants.py)
    assert public(*args) == expected


# --- a topic module imported alone gets its fast path -------------------------------------------------
_ALONE = """
import os, sys
ran = set()
fast_dir = os.path.join({root!r}, "spec", "fast") + os.sep

def profile(frame, event, arg):
    if event == "call" and frame.f_code.co_filename.startswith(fast_dir):
        ran.add(os.path.basename(frame.f_code.co_filename)[:-3] + "." + frame.f_code.co_name)

{imports}
sys.setprofile(profile)
{call}
sys.setprofile(None)
assert {expected!r} in ran, sorted(ran)
assert not any(name in sys.modules for name in {unrelated!r}), sorted(m for m in sys.modules if m.startswith("spec.fast."))
from spec import fast
names = sorted(f"{{r.__module__}}.{{r.__qualname__}}" for r, v in fast.registered().items()
               if v.__module__.startswith("spec.fast."))
print("\\n".join(names))
"""

ALONE = [
    ("from spec.tma import swizzle", "swizzle.swizzle_byte_addresses('128B', range(0, 4096, 16))",
     "tma_swizzle.swizzle_byte_addresses"),
    ("from spec.tma import place", "place.place_rows(place.make_box('128B', 2, (64, 8), 0x400))",
     "tma_place.place_rows"),
    ("from spec.tma import im2col",
     "im2col.placement_json(im2col.make_load('im2col', (16, 4, 4, 1), (-1, -1), (0, 0), 16, 8, (0, 0, 0, 0), "
     "elem_bytes=2, swizzle='64B', smem_address=0x400))", "tma_im2col.placement_json"),
    ("from spec.cute import notation", "notation.parse_layout('Sw<3,4,3> o (8,64):(64,1)')",
     "cute_notation.parse_layout"),
    ("from spec.cute import layout", "layout.evaluate(layout.Layout((8, 64), (64, 1)), 3, 5)",
     "cute_layout.evaluate"),
    ("from spec.mma import descriptor, readmap",
     "readmap.mn_parts(readmap.make_operand(descriptor.decode('sm90', 0x4000004000010040), 'bf16', 'K', 64))",
     "mma_readmap.mn_parts"),
    ("from spec.cases import desc_case",
     "desc_case.first_misread(desc_case.parse_case({'descriptor': '0x4000004000010040', 'dtype': 'bf16', "
     "'major': 'K', 'mn': 64, 'layout': 'Sw<3,4,3> o ((8,8),64):((64,512),1)', 'start_address': 0x400}, 'sm90'))",
     "cases_desc_case.first_misread"),
]


@pytest.mark.parametrize("imports, call, expected", ALONE, ids=[a[2] for a in ALONE])
def test_a_topic_module_imported_alone_gets_its_fast_path(imports, call, expected):
    """In a fresh interpreter that imports one topic module and nothing of spec.fast but the package: its
    public function runs the fast version (spec.fast imports the topic's fast module when first asked),
    the fast modules of topics never reached are not imported, and registered() is then complete."""
    topic = expected.split(".")[0]
    unrelated = ["spec.fast.cases_desc_case" if topic == "tma_im2col" else "spec.fast.tma_im2col"]
    code = _ALONE.format(root=ROOT, imports=imports, call=call, expected=expected, unrelated=unrelated)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected_names = sorted(_name(r) for r, v in fast.registered().items() if v.__module__.startswith("spec.fast."))
    assert done.stdout.split() == expected_names
