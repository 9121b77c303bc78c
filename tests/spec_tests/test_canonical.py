"""Canonical layouts (PTX 9.7.16.3.3): the manual's five worked examples reproduced exactly, and the
canonical table checked against the byte-level read map (two independent writings of one rule)."""
from hypothesis import given, settings, strategies as st
import pytest

from spec.mma import canonical
from spec.mma import descriptor
from spec.mma import dtypes
from spec.mma import readmap
from spec.mma.canonical import CanonicalParams
from spec.cute.notation import parse_layout
from spec.cute.swizzle import repeat_bytes

# The five worked examples as the manual prints them (PTX 9.7.16.3.3, Figures 188-192). Values are copied
# from the manual's tables: "LBO = 64*sizeof(tf32)", "Encoding of LBO = (LBO) >> 4 = 16", ...
MANUAL_EXAMPLES = [
    dict(figure=188, major="K", swizzle="none", dtype="tf32",
         exact="Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))",
         T=4, m=2, k=2, lbo=64, sbo=32, lbo_bytes=64 * 4, sbo_bytes=32 * 4, lbo_enc=16, sbo_enc=8),
    dict(figure=189, major="K", swizzle="32B", dtype="tf32",
         exact="Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))",
         T=4, m=2, k=2, lbo=None, sbo=64, lbo_bytes=None, sbo_bytes=64 * 4, lbo_enc=1, sbo_enc=16),
    dict(figure=190, major="MN", swizzle="none", dtype="bf16",
         exact="Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))",
         T=8, m=2, k=2, lbo=128, sbo=64, lbo_bytes=128 * 2, sbo_bytes=64 * 2, lbo_enc=16, sbo_enc=8),
    dict(figure=191, major="MN", swizzle="32B", dtype="bf16",
         exact="Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))",
         T=8, m=2, k=2, lbo=128, sbo=256, lbo_bytes=128 * 2, sbo_bytes=256 * 2, lbo_enc=16, sbo_enc=32),
    dict(figure=192, major="MN", swizzle="64B", dtype="bf16",
         exact="Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))",
         T=8, m=2, k=2, lbo=256, sbo=512, lbo_bytes=256 * 2, sbo_bytes=512 * 2, lbo_enc=32, sbo_enc=64),
]


@pytest.mark.parametrize("ex", MANUAL_EXAMPLES, ids=lambda e: f"figure{e['figure']}")
def test_worked_example_exact_layout(ex):
    d = dtypes.dtype(ex["dtype"])
    assert dtypes.elements_per_chunk(d, dtypes.default_kind(d)) == ex["T"]  # T = 128 / bits
    params = CanonicalParams(ex["major"], ex["swizzle"], ex["T"], ex["m"], ex["k"], ex["lbo"] or 0, ex["sbo"])
    built = canonical.canonical_layout(params)
    manual = parse_layout(ex["exact"])
    if ex["lbo"] is None:  # "LBO: NA" - the layout has no LBO term; compare everything else
        assert built.layout == manual.layout and built.swizzle == manual.swizzle
    else:
        assert built == manual
    assert built.notation() == ex["exact"].replace("Swizzle<", "Sw<")


@pytest.mark.parametrize("ex", MANUAL_EXAMPLES, ids=lambda e: f"figure{e['figure']}")
def test_worked_example_descriptor_values(ex):
    params = CanonicalParams(ex["major"], ex["swizzle"], ex["T"], ex["m"], ex["k"], ex["lbo"] or 0, ex["sbo"])
    values = canonical.descriptor_bytes(params, dtypes.dtype(ex["dtype"]).bits)
    assert values == {"lbo_bytes": ex["lbo_bytes"], "sbo_bytes": ex["sbo_bytes"],
                      "lbo_encoded": ex["lbo_enc"], "sbo_encoded": ex["sbo_enc"]}
    # The encodings are what a descriptor built with these byte values holds in its LBO/SBO fields.
    arch = "sm100"
    lbo = 16 if ex["lbo_bytes"] is None else ex["lbo_bytes"]
    d = descriptor.encode(arch, 0, lbo, ex["sbo_bytes"], ex["swizzle"])
    assert (d.raw >> 16) & 0x3FFF == ex["lbo_enc"] and (d.raw >> 32) & 0x3FFF == ex["sbo_enc"]


@pytest.mark.parametrize("ex", MANUAL_EXAMPLES, ids=lambda e: f"figure{e['figure']}")
def test_worked_example_read_map(ex):
    """One instruction reads (the MN extent of the figure) x (instruction K); the read map through the
    example's descriptor equals the example's exact layout on those elements (K-major: 2 chunks of K,
    the first pattern repeat; the manual's second K repeat is the next instruction)."""
    d = dtypes.dtype(ex["dtype"])
    manual = parse_layout(ex["exact"])
    lbo = 16 if ex["lbo_bytes"] is None else ex["lbo_bytes"]
    desc = descriptor.encode("sm100", 0, lbo, ex["sbo_bytes"], ex["swizzle"])
    mn = 8 * ex["m"] if ex["major"] == "K" else ex["T"] * {"none": 1, "32B": 2, "64B": 4}[ex["swizzle"]] * ex["m"]
    op = readmap.make_operand(desc, ex["dtype"], ex["major"], mn)
    got = readmap.read_addresses(op)
    for i in range(mn):
        for j in range(op.k):
            assert got[i][j] == manual.swizzle(manual.layout(i, j) * d.bits // 8), (i, j)


def test_figure_189_literal_layout_overlaps():
    """Finding (rule canonical.k_major.2k_overlaps): taken literally, Figure 189's exact layout puts
    elements (1, 0) and (0, 8) at the same offset: rows are 8 tf32 (32 B) apart but each row holds
    2k = 4 chunks of 4 contiguously."""
    manual = parse_layout("Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))")
    assert manual.layout(1, 0) == manual.layout(0, 8) == 8


# --- canonical table == read map, for every legal major/swizzle/type --------------------------------
CASES = []
for arch in ("sm90", "sm100"):
    for major in ("K", "MN"):
        for swizzle in descriptor.swizzle_codes(arch):
            for name in ("f16", "bf16", "tf32", "e4m3", "s8", "e2m1"):
                d = dtypes.dtype(name)
                op_probe = dict(arch=arch, major=major, swizzle=swizzle, dtype=name)
                CASES.append(op_probe)


def _legal(case) -> bool:
    desc = descriptor.encode(case["arch"], 0, 16, 16, case["swizzle"])
    op = readmap.make_operand(desc, case["dtype"], case["major"], 8)
    return not readmap.violations(op)


LEGAL_CASES = [c for c in CASES if _legal(c)]


def _params(case, m, lbo_bytes, sbo_bytes):
    d = dtypes.dtype(case["dtype"])
    kind = dtypes.default_kind(d)
    T = dtypes.elements_per_chunk(d, kind)
    k_inst = dtypes.default_instruction_k(d, kind)
    if case["major"] == "K":
        k = 1
    else:
        k = k_inst // (4 if case["swizzle"] == "128B_atom32B" else 8)
    to_elems = lambda b: b * 8 // d.bits
    return CanonicalParams(case["major"], case["swizzle"], T, m, k, to_elems(lbo_bytes), to_elems(sbo_bytes))


def test_legal_cases_cover_both_majors_and_atom32b():
    combos = {(c["arch"], c["major"], c["swizzle"]) for c in LEGAL_CASES}
    assert ("sm100", "MN", "128B_atom32B") in combos and ("sm90", "MN", "128B") in combos
    assert ("sm100", "K", "128B_atom32B") not in combos     # Table 54: no K-major atom
    assert not any(c["dtype"] == "tf32" and c["major"] == "MN" and c["arch"] == "sm90" for c in LEGAL_CASES)


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(LEGAL_CASES), m=st.integers(1, 3), lbo=st.integers(1, 256),
       sbo=st.integers(1, 256), start_block=st.integers(0, 30))
def test_canonical_table_equals_read_map(case, m, lbo, sbo, start_block):
    """From a start on the repeat boundary with base offset 0, the read map is exactly the canonical
    layout with the swizzle on absolute byte addresses (PTX 9.7.16.3.3)."""
    d = dtypes.dtype(case["dtype"])
    start = start_block * repeat_bytes(case["swizzle"])
    if start >= 1 << 18:
        return
    params = _params(case, m, 16 * lbo, 16 * sbo)
    desc = descriptor.encode(case["arch"], start, 16 * lbo, 16 * sbo, case["swizzle"])
    mn = canonical.mn_extent(params)
    op = readmap.make_operand(desc, case["dtype"], case["major"], mn)
    assert op.k == canonical.k_extent(params)
    got = readmap.read_addresses(op)
    for i in range(mn):
        for j in range(op.k):
            assert got[i][j] == canonical.byte_address(params, d.bits, start, i, j), (i, j)


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from([c for c in LEGAL_CASES if c["swizzle"] != "none"]),
       lbo=st.integers(1, 64), sbo=st.integers(1, 64), line=st.integers(0, 200),
       table41=st.booleans())
def test_base_offset_selects_absolute_or_start_relative_swizzle(case, lbo, sbo, line, table41):
    """Off the repeat boundary (start = 128 * line), rule readmap.swizzle_phase (decided on an H100):
    base offset 0 reads the canonical layout swizzled on absolute addresses, swizzle(start + offset);
    Table 41's base offset, (start >> 7) & 7, reads it swizzled from the start, start + swizzle(offset)."""
    d = dtypes.dtype(case["dtype"])
    start = 128 * line
    params = _params(case, 1, 16 * lbo, 16 * sbo)
    base_offset = (start >> 7) & 7 if table41 else 0
    desc = descriptor.encode(case["arch"], start, 16 * lbo, 16 * sbo, case["swizzle"], base_offset=base_offset)
    op = readmap.make_operand(desc, case["dtype"], case["major"], canonical.mn_extent(params))
    got = readmap.read_addresses(op)
    for i in range(op.mn):
        for j in range(op.k):
            if table41:
                expected = start + canonical.byte_address(params, d.bits, 0, i, j)
            else:
                expected = canonical.byte_address(params, d.bits, start, i, j)
            assert got[i][j] == expected
