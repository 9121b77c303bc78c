"""Read-map cases where the manual is ambiguous or its consequences are easy to get wrong.

Each expectation is worked out by hand below from the rule the test names. Where the manual is
silent, the H100 decided (tests/hardware_replay/test_hardware_replay.py replays all of its observations); the tests
here pin single cases of those rules in readable form, and the readings the hardware refuted.
"""
import pytest

from spec.mma import descriptor
from spec.mma import readmap


def addresses(arch, word_or_desc, dtype, major, mn, k=None, kind=None, model="hardware"):
    desc = word_or_desc
    op = readmap.make_operand(desc, dtype, major, mn, k, kind)
    return readmap.read_addresses(op, model), readmap.violations(op)


def k_major_128b(start, base_offset, arch="sm90"):
    return descriptor.encode(arch, start, 16, 1024, "128B", base_offset=base_offset)


# --- Start one 128-byte line past the 1024-byte boundary (readmap.swizzle_phase) ---------------------
# K-major 128B, bf16 (8 per chunk), start 1152 = 1024 + 128. Row r's linear address of chunk c is
# 1152 + 128 r + 16 c, in absolute line 9 + r. The H100 XORs chunk c with (line - base offset) mod 8.

@pytest.mark.parametrize("row", range(8))
def test_off_boundary_base_offset_zero_swizzles_absolute_addresses(row):
    # base offset 0: phase (9 + r) mod 8 = (1 + r) mod 8, CuTe's Swizzle<3,4,3> on the absolute address.
    got, found = addresses("sm90", k_major_128b(1152, 0), "bf16", "K", 8)
    assert found == []
    for chunk in (0, 1):
        expected = 1152 + 128 * row + 16 * (chunk ^ ((1 + row) % 8))
        assert got[row][8 * chunk] == expected
        assert got[row][8 * chunk + 3] == expected + 6     # element 3 of a chunk: 3 * 2 bytes in


@pytest.mark.parametrize("row", range(8))
def test_off_boundary_table41_base_offset_starts_the_pattern_at_the_start(row):
    # Table 41: base offset (1152 >> 7) & 7 = 1; phase (9 + r - 1) mod 8 = r: the pattern begins at
    # the start address, as if the tile had been swizzled from there.
    got, _ = addresses("sm90", k_major_128b(1152, 1), "bf16", "K", 8)
    for chunk in (0, 1):
        assert got[row][8 * chunk] == 1152 + 128 * row + 16 * (chunk ^ row)


@pytest.mark.parametrize("base_offset", range(8))
def test_base_offset_is_subtracted_from_the_line_index(base_offset):
    """On the boundary (start 1024, line 8 + r), base offset b gives phase (r - b) mod 8."""
    got, _ = addresses("sm90", k_major_128b(1024, base_offset), "bf16", "K", 8)
    for row in range(8):
        assert got[row][0] == 1024 + 128 * row + 16 * ((row - base_offset) % 8)


def test_refuted_readings_differ_from_the_hardware_rule():
    """The two readings the H100 refuted, on the case that tells them apart (start 1152, b = 1):
    'anchored' (rows from the start + b) gives the absolute phase; 'absolute' ignores b."""
    hardware, _ = addresses("sm90", k_major_128b(1152, 1), "bf16", "K", 8)
    anchored, _ = addresses("sm90", k_major_128b(1152, 1), "bf16", "K", 8, model="anchored")
    absolute, _ = addresses("sm90", k_major_128b(1152, 1), "bf16", "K", 8, model="absolute")
    assert anchored == absolute != hardware
    assert anchored[0][0] == 1152 + 16 * 1 and hardware[0][0] == 1152


@pytest.mark.parametrize("model", readmap.PHASE_MODELS)
@pytest.mark.parametrize("k_offset_bytes", [32, 64, 96])
def test_k_advance_inside_a_line_agrees_in_both_models(model, k_offset_bytes):
    """CUTLASS and DeepGEMM step through K by adding 32-byte multiples to the start address inside a
    128-byte line with base offset 0. Chunk c of row r is then absolute chunk k_offset/16 + c of the
    line, XORed with r: CuTe's Swizzle<3,4,3> on absolute addresses from a 1024-aligned tile."""
    start = 4096 + k_offset_bytes
    got, found = addresses("sm90", k_major_128b(start, 0), "e4m3", "K", 16, model=model)
    assert found == []
    for row in range(16):
        group, r = divmod(row, 8)
        for chunk in (0, 1):
            line_chunk = k_offset_bytes // 16 + chunk
            assert got[row][16 * chunk] == 4096 + 1024 * group + 128 * r + 16 * (line_chunk ^ r)


def test_32b_swizzle_phase_counts_128_byte_lines():
    """K-major 32B: rows are 32 bytes apart, so four rows share one 128-byte line and the XOR bit
    (address bit 7) flips every fourth row: row 4's chunk 0 is read at 4*32 + 16."""
    desc = descriptor.encode("sm90", 0, 16, 256, "32B")
    got, _ = addresses("sm90", desc, "bf16", "K", 8)
    assert [got[r][0] for r in range(8)] == [0, 32, 64, 96, 144, 176, 208, 240]
    assert [got[r][8] for r in range(8)] == [16, 48, 80, 112, 128, 160, 192, 224]


# --- Sub-byte elements (readmap.element_byte, dtype.subbyte_packing) ---------------------------------

def test_padded_6bit_elements_first_byte():
    """kind::f8f6f4 reads E2M3 as .b6x16_p32: 16 elements in 12 bytes, then 4 bytes of padding;
    element i starts in byte floor(6 i / 8). K-major no swizzle: the second chunk is LBO away."""
    desc = descriptor.encode("sm100", 0, 256, 128, "none")
    got, found = addresses("sm100", desc, "e2m3", "K", 8)
    assert found == []
    assert len(got[0]) == 32
    first_chunk = [0, 0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 9, 9, 10, 11]
    assert got[0][:16] == first_chunk
    assert got[0][16:] == [256 + b for b in first_chunk]
    assert got[1][0] == 16     # next row of the core matrix


def test_dense_e2m1_two_per_byte():
    """kind::mxf4 reads E2M1 dense: 32 per 16-byte chunk, instruction K = 64."""
    desc = descriptor.encode("sm100", 0, 256, 128, "none")
    got, _ = addresses("sm100", desc, "e2m1", "K", 8)
    assert len(got[0]) == 64
    assert got[0][:4] == [0, 0, 1, 1] and got[0][31] == 15 and got[0][32] == 256


# --- sm103 absolute LBO mode, 48-byte K (readmap.k48.absolute_split) --------------------------------

def test_k96_absolute_mode_splits_at_the_line_end_interpretation():
    """Start 96 bytes into a line: chunks 0 and 1 (bytes 96..127) are read there; chunk 2 is read from
    the absolute address in LBO (4096), as that buffer's chunk 0. All under 128B swizzle with the
    pattern anchored at each chunk's own origin (both 1024-aligned lines here)."""
    start, second = 1024 + 96, 4096
    desc = descriptor.encode("sm103", start, second, 1024, "128B", lbo_mode="absolute")
    got, found = addresses("sm103", desc, "e2m1", "K", 8, k=96)
    assert found == []
    for r in range(8):
        for k in range(96):
            chunk, byte = divmod(k, 32)
            byte //= 2
            if chunk < 2:
                expected = 1024 + 128 * r + 16 * ((6 + chunk) ^ r) + byte
            else:
                expected = 4096 + 128 * r + 16 * (0 ^ r) + byte
            assert got[r][k] == expected, (r, k)


def test_k96_relative_mode_from_line_offset_96_crosses_the_line():
    desc = descriptor.encode("sm103", 1024 + 96, 16, 1024, "128B")
    _, found = addresses("sm103", desc, "e2m1", "K", 8, k=96)
    assert [v.rule.id for v in found] == ["operand.k_slice.inside_line"]


@pytest.mark.parametrize("line_offset", [0, 48])
def test_k96_relative_mode_fits_when_the_slice_stays_in_the_line(line_offset):
    desc = descriptor.encode("sm103", 2048 + line_offset, 16, 1024, "128B")
    _, found = addresses("sm103", desc, "e2m1", "K", 8, k=96)
    assert found == []


# --- read_addresses computes per-dimension parts once: it must equal element_address everywhere -----
@pytest.mark.parametrize("model", readmap.PHASE_MODELS)
@pytest.mark.parametrize("arch, dtype, major, swizzle, mode, kind, k", [
    ("sm90", "bf16", "K", "128B", None, None, None), ("sm90", "bf16", "MN", "64B", None, None, None),
    ("sm90", "e4m3", "K", "none", None, None, None), ("sm100", "tf32", "MN", "128B_atom32B", None, None, None),
    ("sm100", "e2m3", "K", "32B", None, "f8f6f4", None), ("sm103", "e2m1", "K", "128B", "absolute", "mxf4", 96),
    ("sm90", "f16", "MN", "none", None, None, None)])
def test_read_addresses_equals_element_address(model, arch, dtype, major, swizzle, mode, kind, k):
    for start, base_offset in ((0x1000, 0), (0x1000 + 96 if major == "K" else 0x1180, 0), (0x1180, 3)):
        if mode == "absolute" and base_offset:
            continue
        desc = descriptor.encode(arch, start, 0x6000 if mode else 512, 2048, swizzle,
                                 base_offset if swizzle != "none" else 0, mode)
        op = readmap.make_operand(desc, dtype, major, 64, k, kind)
        assert readmap.read_addresses(op, model) == [[readmap.element_address(op, mn, j, model)
                                                     for j in range(op.k)] for mn in range(op.mn)]
