"""`scales plan` (solver/synth/scales_plan.py) and the scale_path rules (spec/scales/path.py).

Expectations come from sources apart from the planner: Triton's placement of its scale copies
(TensorMemoryToLLVM.cpp: "Multiple copies of 32x128b blocks are laid out along M/N first then K",
colOffset = (j * repMorN + i) * 4) and of its scale-factor ids (MMAv5.cpp: subWordIdx = k % (4 /
scaleFactorColsPerSet), times the columns per set), the instruction descriptor's bits as PTX ISA 9.0
Tables 43 and 44 print them, and the row-major order in which a TMA box lands in shared memory."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from spec.rule import SpecError, check_all
from spec.scales import layouts, path
from solver.synth import scales_plan as sp

TILES = [("mxf8f6f4", None, 128, 128, 128), ("mxf8f6f4", 32, 128, 256, 256), ("mxf4", 32, 128, 64, 512),
         ("mxf4nvf4", 32, 128, 256, 256), ("mxf4nvf4", 16, 128, 256, 256), ("mxf4nvf4", 16, 128, 8, 128),
         ("mxf4nvf4", 16, 128, 192, 1024)]
SETS = {"mxf8f6f4": 1, "mxf4": 2}          # Triton's scaleFactorColsPerSet (mxf4nvf4: 2 for block32, 4 for 16)


def _plan(kind, block, m, n, k, **kw):
    return sp.plan(sp.make_request(kind, m, n, k, block=block, **kw))


@pytest.mark.parametrize("kind, block, m, n, k", TILES)
def test_a_plan_is_found_and_the_specification_accepts_it(kind, block, m, n, k):
    found = _plan(kind, block, m, n, k)
    assert found.found and found.check["ok"], found.check
    assert found.check["misread"] == {"A": None, "B": None}


@pytest.mark.parametrize("kind, block, m, n, k", TILES)
def test_copies_are_laid_out_as_triton_lays_them(kind, block, m, n, k):
    found = _plan(kind, block, m, n, k)
    per_set = SETS.get(kind) or (4 if block == 16 else 2)
    blocks = -(-k // (128 // 4 if kind == "mxf8f6f4" else 16 if per_set == 4 else 32))
    rep_k = -(-blocks // 4)
    for name, rows in (("A", m), ("B", n)):
        rep = -(-rows // 128)
        first = found.operands[name]["first_column"]
        got = [(c["smem_address"] - found.operands[name]["smem_address"], c["column"] - first)
               for c in found.copies if c["operand"] == name]
        wanted = [((i * rep_k + j) * 512, (j * rep + i) * 4) for i in range(rep) for j in range(rep_k)]
        assert sorted(got) == sorted(wanted)


@pytest.mark.parametrize("kind, block, m, n, k", TILES)
def test_each_k_step_takes_tritons_scale_factor_id_and_word(kind, block, m, n, k):
    found = _plan(kind, block, m, n, k)
    per_set = SETS.get(kind) or (4 if block == 16 else 2)
    for step in found.steps:
        t = step["t"]
        sub_word, word = t % (4 // per_set), t // (4 // per_set)
        assert step["sf_id_a"] == step["sf_id_b"] == sub_word * per_set
        rep_b = -(-n // 128)
        assert step["a_column"] - found.operands["A"]["first_column"] == 4 * word
        assert step["b_column"] - found.operands["B"]["first_column"] == 4 * word * rep_b


@pytest.mark.parametrize("kind, block, m, n, k", TILES)
def test_instruction_descriptors_carry_table_43_44_fields(kind, block, m, n, k):
    found = _plan(kind, block, m, n, k)
    for step in found.steps:
        word = int(step["instr_desc"], 16)
        assert (word >> 4) & 3 == step["sf_id_b"] and (word >> 29) & 3 == step["sf_id_a"]
        assert (word >> 17) & 0x3F == n >> 3 and (word >> 27) & 3 == m >> 7
        assert (word >> 23) & 1 == (0 if found.scale_type == "ue4m3" else 1)
        assert f".scale_vec::{found.vector} " in step["ptx"] and step["instr_desc"] in step["ptx"]


@pytest.mark.parametrize("kind, block, m, n, k", TILES[:5])
def test_the_tma_box_lands_each_scale_where_its_copy_reads_it(kind, block, m, n, k):
    """A box lands in shared memory in row-major order of its dimensions (dimension 0 fastest); the copy
    reads row r of its chunk at its descriptor's start + 16 r. Together: scale (r, c) of the interleaved
    writer is read where the TMA put it."""
    found = _plan(kind, block, m, n, k)
    for name, o in found.operands.items():
        box = o["tensor_map"]["boxDim"]
        assert o["tensor_map"]["boxDim"] == o["tensor_map"]["globalDim"] and max(box) <= 256
        for r in range(0, o["rows"], 7):
            for c in range(o["k_blocks"]):
                coordinate = [4 * ((r % 128) // 32) + c % 4, r % 32, c // 4, r // 128]
                index = 0
                for extent, x in reversed(list(zip(box, coordinate))):
                    index = index * extent + x
                wanted = layouts.offset("interleaved", r, c, o["rows"], o["k_blocks"])
                assert index == wanted


def test_the_defaults_follow_the_objective():
    assert (_plan("mxf4nvf4", 16, 128, 128, 128).scale_type, _plan("mxf4", None, 128, 128, 128).scale_type) == \
        ("ue4m3", "ue8m0")
    assert _plan("mxf4nvf4", 16, 128, 128, 128, scale_type="ue8m0").scale_type == "ue8m0"
    assert _plan("mxf4nvf4", 32, 128, 128, 128).vector == "2X"


NONE = [
    (dict(kind="mxf8f6f4", m=128, n=128, k=128, block=16), "scales.vector.kind"),
    (dict(kind="mxf4", m=128, n=128, k=128, block=32, scale_type="ue4m3"), "scales.vector.scale_type"),
    (dict(kind="mxf4nvf4", m=64, n=128, k=128, block=16), "mma.shape.m"),
    (dict(kind="mxf4nvf4", m=128, n=12, k=128, block=16), "mma.shape.n"),
    (dict(kind="mxf4nvf4", m=256, n=24, k=128, block=16, cta_group=2), "mma.shape.n"),
    (dict(kind="mxf4nvf4", m=128, n=128, k=96, block=16), "scales.path.k_steps"),
    (dict(kind="mxf8f6f4", m=128, n=128, k=128, sf_layout="linear-mn"), "scales.path.interleaved_writer"),
    (dict(kind="mxf4nvf4", m=128, n=256, k=1408, block=16), "tmem.alloc.columns"),
]


@pytest.mark.parametrize("request_, rule_id", NONE)
def test_no_plan_names_the_rule_that_excludes_it(request_, rule_id):
    """The requested candidate (the first tried) breaks the rule; the core names it, and every candidate
    breaks one of the core's rules (another scale vector may break only scales.vector.kind)."""
    found = sp.plan(sp.make_request(**request_))
    requested = next(iter(found.rejected.values()))
    assert found.status == "none" and rule_id in found.rules and rule_id in requested
    assert set(found.rules) <= {rule_id, "scales.vector.kind"}
    assert all(set(broken) & set(found.rules) for broken in found.rejected.values())


def test_a_box_past_256_k_tiles_is_named_with_the_tensor_memory_it_overruns():
    found = _plan("mxf4nvf4", 16, 128, 8, 65536)
    assert found.status == "none"
    assert {"tmem.alloc.columns", "tma.map.box_range", "tma.map.box_bytes"} <= set(found.rejected["4X/ue4m3"])


def test_ue4m3_on_mxf4_is_excluded_by_the_scale_type_alone():
    # UE4M3 is mxf4nvf4's 4X alone (Table 55), whatever vector is tried with .kind::mxf4
    found = _plan("mxf4", None, 128, 128, 128, scale_type="ue4m3")
    assert found.rules == found.always_broken == ["scales.vector.scale_type"]


def test_a_tile_just_inside_the_column_budget_is_planned():
    # D 256 columns + A 4 kt + B 8 kt <= 512 up to kt = 21 (K = 21 x 4 x 16)
    assert _plan("mxf4nvf4", 16, 128, 256, 21 * 64).tmem["used"] == 256 + 12 * 21


@given(st.dictionaries(st.sampled_from(["c0", "c1", "c2", "c3"]),
                       st.lists(st.sampled_from(["r0", "r1", "r2", "r3", "r4"]), min_size=1, unique=True),
                       min_size=1))
@settings(max_examples=200, deadline=None)
def test_the_core_excludes_every_candidate_and_is_minimal(rejected):
    import spec.rules  # noqa: F401
    from spec.rule import CATALOGUE
    ids = sorted(CATALOGUE)[:5]          # stand-ins: real ids, so the catalogue order applies
    named = {c: [ids[int(r[1])] for r in rules] for c, rules in rejected.items()}
    core = sp.minimal_core(named)
    assert all(set(b) & set(core) for b in named.values())
    for dropped in core:
        rest = set(core) - {dropped}
        assert not all(set(b) & rest for b in named.values())


@pytest.mark.parametrize("layout, k, broken", [("interleaved", 128, []), ("linear-k", 128,
                         ["scales.path.interleaved_writer"]), ("interleaved", 48, ["scales.path.k_steps"])])
def test_scale_path_rules(layout, k, broken):
    assert [v.rule.id for v in check_all("scale_path", path.ScalePath("mxf4nvf4", "4X", layout, k))] == broken


@pytest.mark.parametrize("field, kw", [
    ("block", dict(block=7)), ("k", dict(k=0)), ("k", dict(k=1 << 17)), ("smem_address", dict(smem_address=100)),
    ("m", dict(m=128, cta_group=2)), ("scale_vec", dict(block=None, scale_vec="8X")), ("kind", dict(kind="f16")),
    ("block", dict(block=None, kind="mxf4nvf4")), ("cta_group", dict(cta_group=3)), ("n", dict(n=10 ** 21)),
    ("m", dict(m=10 ** 21)),
])
def test_malformed_requests_name_their_field(field, kw):
    args = dict(kind="mxf4nvf4", m=128, n=128, k=128, block=16)
    args.update(kw)
    with pytest.raises(SpecError) as e:
        sp.make_request(**args)
    assert e.value.field_name == field


def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "solver.cli.main", "scales", "plan", *argv],
                          capture_output=True, text=True)


def test_cli_json_and_exit_codes():
    found = _cli("--kind", "mxf4nvf4", "--m", "128", "--n", "256", "--k", "256", "--block", "16", "--json")
    assert found.returncode == 0
    doc = json.loads(found.stdout)
    assert doc["status"] == "found" and len(doc["copies"]) == 4 + 8 and len(doc["steps"]) == 4
    none = _cli("--kind", "mxf4", "--m", "128", "--n", "128", "--k", "100", "--json")
    assert none.returncode == 1 and json.loads(none.stdout)["rules"] == ["scales.path.k_steps"]
    bad = _cli("--kind", "mxf4", "--m", "128", "--n", "128", "--k", "128", "--smem-address", "64")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "smem_address" in bad.stderr
