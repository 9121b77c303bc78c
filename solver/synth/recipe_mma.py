"""How the MMA instructions read a recipe's tile: the slices each instruction reads, their descriptors,
the instruction text, and the exhaustive check of every slice.

A recipe (solver.synth.recipe) gives one descriptor per k-step for the whole tile. The instructions do
not all read the whole tile:
- sm90, wgmma (PTX ISA 9.7.15.5, shapes m64nNk*): A is read 64 rows at a time, one wgmma per
  warpgroup, so a 128-row A tile is two instructions whose descriptors differ in their start address
  (warpgroup w starts at row 64w); B is read N rows (N columns of the product) per instruction, N a
  multiple of 8 up to 256 (rule operand.sm90.n_extent).
- sm100/sm103, tcgen05.mma (PTX ISA 9.7.16.10): one instruction reads all M (up to 128 rows per CTA)
  and all N (up to 256) rows; its shape is in the instruction descriptor (`--instr M,N`).

A slice starting at row r0 is the tile's descriptor with its start address moved by the bytes of the
tile layout's offset of element (r0, 0), as CUTLASS's descriptor iterator does (cute/arch/mma_sm90_desc.hpp:
the start address field advances, every other field stays). That move is only right when the layout is
linear across the slice; it is not assumed: every element each slice's descriptor reads (spec.mma.readmap)
is compared with where the recipe's TMA boxes wrote it, and a slice that reads another byte is reported
"refuted" with the element.
"""
from __future__ import annotations

from typing import Optional

from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes, readmap
from spec.rule import SpecError, check_all

WGMMA_M = 64          # rows of A one wgmma reads (PTX ISA 9.7.15.5: every wgmma shape is m64nNk*)
MAX_N = 256           # the largest N of wgmma and tcgen05.mma


def slice_rows(r, rows: int) -> list:
    """[(first row, last row)] of the slices of `rows` rows that cover the tile, or [] when `rows` does
    not divide its MN extent."""
    if rows <= 0 or r.mn % rows:
        return []
    return [(first, first + rows - 1) for first in range(0, r.mn, rows)]


def _shift_bytes(r, first_row: int) -> int:
    """The bytes from the tile's start to the start of row `first_row` (the layout's offset of element
    (first_row, 0), in whole 16-byte chunks; SpecError when the row starts inside a chunk)."""
    d = dtypes.dtype(r.dtype)
    per_chunk = dtypes.elements_per_chunk(d, r.kind)
    offset = r.layout.offset + r.layout.layout(first_row, 0)
    if offset % per_chunk:
        raise SpecError("mn", first_row, "the slice starts inside a 16-byte chunk: no descriptor starts there",
                        readmap.MN_EXTENT.id)
    return offset // per_chunk * 16


def slice_descriptors(r, first_row: int) -> list:
    """The descriptor of each k-step for the slice starting at `first_row`: the tile's, start moved."""
    shift = _shift_bytes(r, first_row)
    words = []
    for step in r.instructions:
        d = spec_descriptor.decode(r.arch, int(step["descriptor"], 16))
        words.append(spec_descriptor.encode(r.arch, d.start_address + shift, d.leading_byte_offset,
                                            d.stride_byte_offset, d.swizzle, d.base_offset, d.lbo_mode))
    return words


def check_slice(r, written: list, first_row: int, rows: int, words: list, k_step: int) -> dict:
    """Every element each k-step's descriptor of this slice reads against `written` (the TMA-written
    address of every tile element, written[mn][k]): proved, or refuted with the first element that
    differs; with the rules the operand breaks (an N wgmma has no: operand.sm90.n_extent)."""
    for step, word in zip(r.instructions, words):
        operand = readmap.make_operand(word, r.dtype, r.major, rows, k_step, r.kind)
        broken = [v.as_json() for v in check_all("operand", operand)]
        if broken:
            return {"status": "refuted", "violations": broken}
        k0 = step["k_offset"]
        for i, read_row in enumerate(readmap.read_addresses(operand)):
            expected = written[first_row + i][k0:k0 + k_step]
            if read_row != expected:
                k = next(k for k in range(k_step) if read_row[k] != expected[k])
                return {"status": "refuted", "element": [first_row + i, k0 + k], "written": expected[k],
                        "read": read_row[k]}
    return {"status": "proved", "method": "exhaustive", "elements": rows * k_step * len(words)}


def sm90_reads(r, written: list, k_step: int, m: Optional[int], n: Optional[int]) -> dict:
    """The wgmma reads of the tile as A (one slice per warpgroup) and as B (one slice per instruction N):
    `m`, `n` from --instr (A: the tile must be M rows; default: N = the tile's MN up to 256)."""
    from solver.fuzz.formats.ptx import wgmma_instruction
    n = n if n is not None else min(r.mn, MAX_N)
    uses, notes = [], []
    if m is not None and m != r.mn:
        notes.append(f"as A: the tile has {r.mn} rows, not M = {m}")
    elif r.mn % WGMMA_M:
        notes.append(f"as A: {r.mn} rows is not a whole number of 64-row warpgroup reads (wgmma is m64nNk*)")
    else:
        uses.append(("A", WGMMA_M))
    if r.mn % n:
        notes.append(f"as B: {r.mn} rows is not a whole number of N = {n} instruction reads")
    else:
        uses.append(("B", n))
    slices = []
    for operand, rows in uses:
        for index, (first, last) in enumerate(slice_rows(r, rows)):
            words = slice_descriptors(r, first)
            slices.append({"operand": operand, ("warpgroup" if operand == "A" else "instruction"): index,
                           "rows": [first, last], "descriptors": [w.hex for w in words],
                           "proof": check_slice(r, written, first, rows, words, k_step)})
    instruction = wgmma_instruction(r.dtype, r.major, n, k_step, a_major=r.major)
    # one tile, read as A or as B: the other operand is another recipe (its own address and major-ness)
    notes.append(f"this tile at {r.smem_address:#x} is read as A or as B; give the other operand its own recipe "
                 f"(its address; imm-trans-a/b above take both as {r.major}-major); %scale_d is a predicate")
    return {"instruction": instruction, "shape": f"m{WGMMA_M}n{n}k{k_step}", "slices": slices, "notes": notes}


def sm100_reads(r, instr_desc: dict) -> dict:
    """tcgen05.mma reads the whole tile in one instruction; its text, with the instruction descriptor of
    --instr M,N[,CTA_GROUP]."""
    from solver.fuzz.formats.ptx import tcgen05_instruction
    return {"instruction": tcgen05_instruction(r.kind, instr_desc["cta_group"]),
            "shape": f"m{instr_desc['m']}n{instr_desc['n']}", "instr_desc": instr_desc["word"], "slices": [],
            "notes": []}


def proved(reads: dict) -> bool:
    """Every slice proved (a recipe whose instructions misread a slice is exit 1)."""
    return all(s["proof"]["status"] == "proved" for s in reads["slices"])
