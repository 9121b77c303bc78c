"""layoutproof.strategies, the public hypothesis strategies (issue 29, friction 2):

1. the module imports as its documented name, and every strategy checks its arguments when it is made;
2. a valid tile is a legal one: injective, inside one CTA's shared memory, of the extents an MMA reads, as an
   oracle independent of the code under test says (pycute, and a plain-Python byte enumeration);
3. same_reads compares what the MMA reads (PTX ISA 9.7.15.5.1 "Matrix Descriptor"), not the bits;
4. a disagreement raises an AssertionError whose message names the tile, both descriptors and the element;
5. (speed: benchmarks/bench_strategies.py measures a check of the largest tile a strategy draws).

Expectations come from the manual (bit positions of 9.7.15.5.1.2.2, the canonical layouts of 9.7.16.3.3, the
instruction K of 9.7.15.5 / 9.7.16.2.1 Table 39), from pycute, or are properties."""
from __future__ import annotations

import ast
import doctest
import itertools
import re

import pycute
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from layoutproof import strategies
from solver.fuzz import compare
from solver.fuzz import strategies as fuzz_strategies

# --- From the manual -----------------------------------------------------------------------------------------
# Element widths (PTX ISA 9.7.16.3.3; the dtype table of 9.7.16.4.2)
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "e2m1": 4}
SM90_SWIZZLE_CODES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}          # bits [62,64), PTX 9.7.15.5.1.2.2
SHARED_MEMORY_PER_BLOCK = 227 * 1024      # CUDA Programming Guide, compute capability 9.0 / 10.x
ARCHES = ("sm90", "sm100", "sm103")


def sm90_word(start: int, lbo: int, sbo: int, swizzle: str, base_offset: int = 0) -> int:
    """A wgmma descriptor packed from PTX 9.7.15.5.1.2.2: start [0,14), LBO [16,30), SBO [32,46), base offset
    [49,52), swizzle [62,64); addresses and offsets stored >> 4."""
    return ((start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | base_offset << 49
            | SM90_SWIZZLE_CODES[swizzle] << 62)


def instruction_k_values(arch: str, dtype: str) -> tuple:
    """One MMA reads 32 bytes of K a row (PTX 9.7.15.5; 9.7.16.2.1 Table 39), and sm103's dense E2M1 also 48."""
    ks = (256 // BITS[dtype],)
    return ks + (96,) if arch == "sm103" and dtype == "e2m1" else ks


# --- The oracle: the tile's storage units, from its layout text, without the code under test -----------------
SWIZZLED = re.compile(r"Sw<(\d+),(\d+),(\d+)> o (.+)")


def pycute_tile(text: str) -> tuple:
    """(swizzle on byte addresses, pycute Layout) of a case's layout text 'Sw<B,M,S> o (shape):(stride)'."""
    found = SWIZZLED.fullmatch(text)
    swizzle = pycute.Swizzle(*map(int, found.groups()[:3])) if found else (lambda address: address)
    shape, stride = (found.group(4) if found else text).split(":")
    return swizzle, pycute.Layout(ast.literal_eval(shape), ast.literal_eval(stride))


def storage_units(case: dict, offsets) -> list:
    """Every byte (every nibble, for 4-bit types) the tile's elements occupy, one entry per element and byte:
    element offset o holds bits [o*bits, (o+1)*bits) past the start, under the swizzle of byte addresses."""
    swizzle, _ = pycute_tile(case["layout"])
    bits, start = BITS[case["dtype"]], case["start_address"]
    if bits == 4:
        return [(swizzle(start + o // 2), o % 2) for o in offsets]
    size = bits // 8
    return [(swizzle(start + o * size + j), 0) for o in offsets for j in range(size)]


def pycute_offsets(case: dict) -> list:
    _, layout = pycute_tile(case["layout"])
    return [layout(i) for i in range(pycute.size(layout))]


def plain_offsets(case: dict) -> list:
    """The same offsets by a plain-Python walk of the flattened modes (faster than pycute, for whole pools)."""
    _, layout = pycute_tile(case["layout"])
    modes = list(zip(pycute.flatten(layout.shape), pycute.flatten(layout.stride)))
    return [sum(i * d for i, (_, d) in zip(index, modes)) for index in itertools.product(*(range(n) for n, _ in modes))]


def assert_legal_tile(arch: str, case: dict, offsets) -> None:
    units = storage_units(case, offsets)
    assert len(set(units)) == len(units), f"two elements share a byte: {case['layout']}"
    assert max(address for address, _ in units) < SHARED_MEMORY_PER_BLOCK and min(units)[0] >= 0
    assert 8 <= case["mn"] <= 256 and case["mn"] % 8 == 0
    assert case["k"] in instruction_k_values(arch, case["dtype"])


# --- 1. The module, and arguments checked when a strategy is made ---------------------------------------------
def test_the_public_module_is_the_implementation():
    assert strategies.descriptors is fuzz_strategies.descriptors
    assert strategies.same_reads is compare.same_reads
    for name in strategies.__all__:
        assert getattr(strategies, name) is not None, name


def test_the_docstring_examples_run():
    for module in (fuzz_strategies, compare):
        failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert attempted > 0 and failed == 0, module.__name__


WRONG_ARGUMENTS = [
    (strategies.descriptors, dict(arch="sm80"), "arch"),
    (strategies.descriptors, dict(dtype="fp64"), "dtype"),
    (strategies.descriptors, dict(dtype="e2m3"), "dtype"),           # padded 6-bit: no CuTe element layout
    (strategies.descriptors, dict(major="row"), "major"),
    (strategies.descriptors, dict(swizzle="16B"), "swizzle"),
    (strategies.descriptors, dict(arch="sm90", swizzle="128B_atom32B"), "swizzle"),   # not a wgmma swizzle
    (strategies.descriptors, dict(max_mn=260), "max_mn"),           # no MMA reads N > 256
    (strategies.descriptors, dict(max_mn=12), "max_mn"),            # core matrices of 8 rows
    (strategies.descriptors, dict(max_mn=0), "max_mn"),
    (strategies.descriptors, dict(pool_size=0), "pool_size"),
    (strategies.descriptors, dict(seed="x"), "seed"),
    (strategies.descriptors, dict(violate=["no.such.rule"]), "violate"),
    (strategies.descriptors, dict(violate=["tma.map.box_swizzle_span"]), "violate"),   # another target's rule
    (strategies.descriptors, dict(violate=5), "violate"),
    (strategies.tile_layouts, dict(major="diagonal"), "major"),
    (strategies.tensor_maps, dict(encode="tiled2"), "encode"),
    (strategies.tmem_forms, dict(op="load"), "op"),
    (strategies.records, dict(target="gemm"), "target"),
    (strategies.recipes, dict(arch="sm_90"), "arch"),
]


@pytest.mark.parametrize("strategy, arguments, name", WRONG_ARGUMENTS,
                         ids=[f"{s.__name__}-{a}" for s, a, _ in WRONG_ARGUMENTS])
def test_a_wrong_argument_is_refused_when_the_strategy_is_made(strategy, arguments, name):
    with pytest.raises(InvalidArgument) as refused:
        strategy(**arguments)                    # made, never drawn from
    assert isinstance(refused.value, ValueError) and f"{name}=" in str(refused.value)


IMPOSSIBLE = [       # (strategy, arguments, the rule the manual says forbids it, where a valid case is asked for)
    (strategies.descriptors, dict(arch="sm90", dtype="e2m1"), "operand.sm90.dtype"),     # no 4-bit wgmma (9.7.15.5)
    (strategies.descriptors, dict(arch="sm90", dtype="tf32", major="MN"), "operand.mn_major.dtype"),  # f16/bf16 only
    (strategies.descriptors, dict(arch="sm100", major="K", swizzle="128B_atom32B"),
     "operand.swizzle.k_major_atom32"),                                                   # no K-major atom (Table 55)
    (strategies.descriptors, dict(arch="sm90", violate=["desc.sm100.fixed_bits"]), "desc.sm100.fixed_bits"),
    (strategies.tmem_forms, dict(arch="sm90"), ""),                                       # sm_90a has no tcgen05
    (strategies.tmem_allocations, dict(arch="sm90"), ""),
]


@pytest.mark.parametrize("strategy, arguments, rule", IMPOSSIBLE, ids=[str(a) for _, a, _ in IMPOSSIBLE])
def test_a_request_no_case_meets_is_refused_when_the_strategy_is_made(strategy, arguments, rule):
    with pytest.raises(strategies.StrategyArgumentError, match="no .*configuration on") as refused:
        strategy(**arguments)
    assert rule in str(refused.value)


def test_rules_may_be_named_as_one_comma_separated_text():
    rules = "desc.tile.stride_byte_offset"
    assert strategies.descriptors("sm90", violate=rules, pool_size=8) is not None


# --- 2. A valid tile is a legal one --------------------------------------------------------------------------
ISSUE_TILE = {"layout": "((8,25),(16,2)):((16,128),(1,32))", "dtype": "e4m3", "start_address": 0, "mn": 200, "k": 32}


def test_the_issue_tile_overlaps_itself_by_the_oracle_and_by_tile_problem():
    """K-major, no swizzle, 8-bit (PTX 9.7.16.3.3): a core matrix is 8 rows of 16 bytes, 128 bytes; K chunk 1,
    32 bytes (LBO) past chunk 0, puts its rows 0..5 on rows 2..7 of chunk 0."""
    units = storage_units(ISSUE_TILE, pycute_offsets(ISSUE_TILE))
    assert len(set(units)) < len(units)
    assert "overlaps" in strategies.tile_problem(ISSUE_TILE)


def test_a_tile_past_shared_memory_is_refused():
    tile = dict(ISSUE_TILE, layout="((8,25),(16,2)):((16,128),(1,3200))", start_address=SHARED_MEMORY_PER_BLOCK - 1024)
    assert len(set(pycute_offsets(tile))) == 200 * 32            # injective: chunks 3200 elements apart
    assert "shared memory" in strategies.tile_problem(tile)


@pytest.mark.parametrize("arch", ARCHES)
def test_every_valid_tile_of_the_default_pool_is_legal(arch):
    """Exhaustive over the pool hypothesis draws from (plain-Python enumeration of each layout)."""
    pool = fuzz_strategies._records("desc", arch, (), fuzz_strategies.POOL_SIZE, 0)
    assert len(pool) >= 100
    for record in pool:
        assert record["violates"] == [] and record["outcome"] == "ok"
        assert_legal_tile(arch, record["case"], plain_offsets(record["case"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ARCHES).flatmap(lambda arch: strategies.descriptors(arch, pool_size=60)))
def test_every_drawn_valid_tile_is_injective_by_pycute(record):
    assert_legal_tile(record["arch"], record["case"], pycute_offsets(record["case"]))


@settings(max_examples=30, deadline=None)
@given(strategies.tile_layouts("sm90", dtype="bf16", major="K", swizzle="128B", max_mn=64, pool_size=40),
       strategies.tile_layouts("sm100", major="MN", swizzle="none", pool_size=40))
def test_drawn_tiles_are_what_was_asked(k_major, mn_major):
    assert (k_major["dtype"], k_major["major"], k_major["swizzle"], k_major["arch"]) == ("bf16", "K", "128B", "sm90")
    assert k_major["mn"] <= 64 and k_major["layout"].startswith("Sw<3,4,3> o ")     # CuTe's 128B functor
    rows, (row_elements, atoms) = k_major["shape"]
    assert rows[0] == 8 and row_elements == 64 and atoms == 1     # 128-byte rows of 64 bf16: K = 16 fits one
    assert mn_major["major"] == "MN" and mn_major["swizzle"] == "none" and "Sw<" not in mn_major["layout"]


# --- 3. same_reads: what the MMA reads -----------------------------------------------------------------------
TILE_64 = {"arch": "sm90", "dtype": "bf16", "major": "K", "mn": 64, "k": 16}


@pytest.mark.parametrize("swizzle", ["32B", "64B", "128B"])
@pytest.mark.parametrize("dtype", ["bf16", "e4m3", "tf32"])
def test_lbo_is_not_read_where_k_fits_one_swizzle_atom(swizzle, dtype):
    """PTX 9.7.15.5.1: for K-major swizzled layouts LBO is not used ('assumed to be 1'); one instruction reads
    32 bytes of K, inside one W-byte swizzle row from a row-aligned start."""
    tile = dict(TILE_64, dtype=dtype, k=256 // BITS[dtype])
    assert strategies.same_reads(sm90_word(0x2000, 16, 1024, swizzle), sm90_word(0x2000, 0x3000, 1024, swizzle), tile)


def test_sbo_is_read_past_the_first_row_group():
    """SBO is the distance between 8-row groups: rows 8.. of a 64-row operand move with it."""
    first, second = sm90_word(0x400, 16, 1024, "128B"), sm90_word(0x400, 16, 2048, "128B")
    assert not strategies.same_reads(first, second, TILE_64)
    found = strategies.first_different_read(first, second, TILE_64)
    assert (found.mn, found.k) == (8, 0) and found.differing == 56 * 16      # rows 8..63, every k


def test_lbo_is_read_where_k_spans_two_core_matrices():
    """K-major, no swizzle: K chunk c (8 bf16) at c x LBO; K = 16 reads chunk 1 (PTX 9.7.16.3.1.1)."""
    first, second = sm90_word(0x400, 128, 256, "none"), sm90_word(0x400, 2048, 256, "none")
    found = strategies.first_different_read(first, second, dict(TILE_64, mn=8))
    assert (found.mn, found.k, found.first_address, found.second_address) == (0, 8, 0x400 + 128, 0x400 + 2048)


def test_one_word_in_any_spelling():
    word = sm90_word(0x400, 16, 1024, "128B")
    decoded = compare.as_descriptor(word, "sm90")
    tile = {k: v for k, v in TILE_64.items() if k != "arch"}
    assert strategies.same_reads(word, f"{word:#018x}", tile, arch="sm90")
    assert strategies.same_reads(decoded, word, tile)                     # the arch from the Descriptor
    assert strategies.same_reads(word, word, {"arch": "sm90", "case": tile})     # a fuzz record


def test_the_arch_must_be_known_and_one():
    word = sm90_word(0x400, 16, 1024, "128B")
    tile = {k: v for k, v in TILE_64.items() if k != "arch"}
    with pytest.raises(ValueError, match="no arch"):
        strategies.same_reads(word, word, tile)
    with pytest.raises(ValueError, match="different arches"):
        strategies.same_reads(word, word, TILE_64, arch="sm100")


def lbo_is_unused(arch: str, case: dict, word: int) -> bool:
    """PTX 9.7.15.5.1 (9.7.16.4.1 for tcgen05): LBO is not used by a K-major swizzled operand, whose K chunks
    sit side by side in one W-byte swizzle row, as long as the K read (32 or 48 bytes) fits in that row; the
    absolute LBO mode of sm103 (bit 52) reads an address from it instead."""
    found = SWIZZLED.fullmatch(case["layout"])
    row_bytes = 1 << (int(found.group(1)) + int(found.group(2))) if found else None   # Sw<B,M,S>: rows of 2^(B+M) bytes
    absolute = arch != "sm90" and (word >> 52) & 1
    return case["major"] == "K" and row_bytes is not None and not absolute \
        and case["k"] * BITS[case["dtype"]] // 8 <= row_bytes


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(ARCHES).flatmap(lambda arch: strategies.descriptors(arch, pool_size=60)),
       st.integers(min_value=1, max_value=(1 << 14) - 1))
def test_a_descriptor_reads_as_itself_and_lbo_is_free_where_unused(record, lbo_units):
    case, arch = record["case"], record["arch"]
    word = int(case["descriptor"], 16)
    assert strategies.same_reads(word, case["descriptor"], record)
    if lbo_is_unused(arch, case, word):
        other = (word & ~(0x3FFF << 16)) | lbo_units << 16            # LBO: bits [16,30)
        assert strategies.same_reads(word, other, record)


@settings(max_examples=40, deadline=None)
@given(strategies.descriptors("sm90", pool_size=60), strategies.descriptors("sm90", pool_size=60))
def test_same_reads_is_symmetric(a, b):
    tile = a["case"]
    assert strategies.same_reads(a["case"]["descriptor"], b["case"]["descriptor"], tile, arch="sm90") == \
        strategies.same_reads(b["case"]["descriptor"], a["case"]["descriptor"], tile, arch="sm90")


# --- 4. The message a test report shows --------------------------------------------------------------------
def test_a_disagreement_names_the_tile_both_descriptors_and_the_element():
    built, expected = sm90_word(0x400, 16, 1024 + 64, "128B"), sm90_word(0x400, 16, 1024, "128B")
    tile = dict(TILE_64, start_address=0x400, layout="Sw<3,4,3> o ((8,8),(64,1)):((64,512),(1,0))")
    with pytest.raises(AssertionError) as failed:
        strategies.assert_same_reads(built, expected, tile, names=("built", "expected"))
    message = str(failed.value)
    lines = message.splitlines()
    # element (8, 0): the second row group at start + SBO; 128B swizzle XORs bits [4,7) with the line index
    # bits [7,10) (PTX 9.7.16.10.6), 0 for lines 16 and 17 here: 0x400 + 0x440 = 0x840, 0x400 + 0x400 = 0x800
    assert "element (mn=8, k=0)" in lines[0]
    assert "0x840 by built" in lines[0] and "0x800 by expected" in lines[0]
    assert "sm90 bf16 K-major mn=64 k=16 at 0x400: Sw<3,4,3> o ((8,8),(64,1)):((64,512),(1,0))" in lines[1]
    assert f"{built:#018x}" in lines[2] and "stride_byte_offset=0x440" in lines[2] and "swizzle=128B" in lines[2]
    assert f"{expected:#018x}" in lines[3] and "stride_byte_offset=0x400" in lines[3]
    assert "fields that differ: stride_byte_offset (0x440 vs 0x400)" in lines[4]
    assert strategies.reads_message(expected, expected, tile) is None


def test_a_field_the_tile_does_not_read_is_marked_so():
    """LBO is not used by K-major swizzled layouts (PTX 9.7.15.5.1); SBO is, past the first 8 rows."""
    first, second = sm90_word(0x400, 16, 1024, "128B"), sm90_word(0x400, 4096, 2048, "128B")
    last = strategies.reads_message(first, second, TILE_64).splitlines()[-1]
    assert last == ("  fields that differ: leading_byte_offset (0x10 vs 0x1000, not read for this tile), "
                    "stride_byte_offset (0x400 vs 0x800)")


def test_bits_outside_the_fields_are_not_read():
    word = sm90_word(0x400, 16, 1024, "128B")
    stray = word | 1 << 14                               # bits [14,16) are unused on sm90 (9.7.15.5.1.2.2)
    assert strategies.same_reads(word, stray, TILE_64) and strategies.reads_message(word, stray, TILE_64) is None


# --- 5. Speed is measured in benchmarks/bench_strategies.py (timed tests flake under load) ------------------
@settings(max_examples=25, deadline=None)
@given(st.sampled_from(ARCHES).flatmap(lambda arch: strategies.descriptors(arch, pool_size=60)))
def test_a_descriptor_reads_like_itself(record):
    strategies.assert_same_reads(record["case"]["descriptor"], int(record["case"]["descriptor"], 16), record)
