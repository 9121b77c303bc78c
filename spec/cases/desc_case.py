"""A descriptor together with the tile it is meant to read (the `check` command's arguments; the
`desc` target of `layoutproof fuzz`).

The case's operand is B of one MMA: on sm90 wgmma.mma_async (M = 64, N = mn), on sm100/sm103 a dense
tcgen05.mma whose .cta_group ("cta_group", 1 or 2; default 1) and M ("m"; default 128) the case names too,
so that its shape can be checked against the manual's tables (spec.mma.shape; rule
desc.tile.cta_pair_split says how N follows from mn).

The tile is the user's: element (mn, k) of the operand lives at byte address swizzle(B + byte(L(mn, k)))
for a CuTe layout L (optionally composed with a byte-address swizzle), a start address B, and
byte(o) = (o div T) * 16 + the element's byte in its chunk (spec.mma.dtypes). The descriptor is read as
the MMA reads it (spec.mma.readmap).

The rules here say, field by field, what a descriptor must hold to read that tile, from the
definitions of PTX 9.7.16.3.1-2 (the same ones spec.mma.readmap computes addresses from): each field is
the distance between two elements of the tile's *linear* (unswizzled) layout, and a field is used only
when the instruction reads the second element:

  | major | swizzle | SBO: from (0,0) to        | LBO: from (0,0) to           |
  | K     | none    | (8, 0): the next 8-row group | (0, T): the next K chunk     |
  | K     | W bytes | (8, 0)                     | (0, T*W/16): the next K atom |
  | MN    | none    | (T, 0): the next MN chunk  | (0, 8): the next 8 K rows    |
  | MN    | W bytes | (0, R): the next R K rows  | (T*W/16, 0): the next MN atom |

(R = 8; 4 for 128B_atom32B.) The start address is the linear address of element (0, 0); the swizzle is
the layout's; the base offset is 0 (the tile's swizzle acts on absolute addresses, which base offset 0
reads from any start on the H100: rule readmap.swizzle_phase). The absolute LBO mode (sm103) is left
out of that table: there a K-major operand's LBO is an address, not a distance, and the rule says where
the K chunks are read instead (rule readmap.k48.absolute_split).

On sm100/sm103 the case's MMA carries an instruction descriptor too (`instruction_descriptor`): the case
breaks its rules (spec.mma.instr_desc) as well, e.g. an MN-major kind::mxf4 B sets a transpose bit that
kind has not.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from spec import fast
from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes
from spec.mma import instr_desc
from spec.mma import readmap
from spec.mma import shape as mma_shape
from spec.cute.layout import ComposedLayout, evaluate
from spec.cute.notation import parse_layout
from spec.rule import SpecError, check_all, rule
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES, pattern_rows

SUBJECT = "desc_case"
SOURCE = "PTX ISA 9.7.16.3.1-2 (LBO, SBO, start address), 9.7.16.10.6 (swizzle)"

MISREAD = rule("desc.tile.reads", "PTX ISA 9.7.16.3 (what a descriptor reads: the readmap rules)",
               "Definition: the descriptor reads the tile when every element (mn, k) of the instruction "
               "is read from the address where the tile holds it.")


PAIR_SPLIT = rule(
    "desc.tile.cta_pair_split", "CUTLASS cute/atom/mma_traits_sm100.hpp (MMA_Traits of SM100_MMA_*_2x1SM_SS: "
    "BLayout 2 x (N/2, K)); PTX ISA 9.7.16.10 (B 'in Shared Memory of the current CTA and optionally in "
    "peer CTA')",
    "Definition: the desc case's mn is what its descriptor reads. With .cta_group::1 that is the "
    "instruction's N; with .cta_group::2 each CTA of the pair reads its half of B through the same "
    "descriptor, so N = 2 x mn.", evidence="cutlass")
SM90_M = 64                   # wgmma.mma_async is m64nNkK (PTX 9.7.15.5)
DEFAULT_M = 128               # the tcgen05.mma the desc target renders by default (solver/fuzz/formats/ptx.py)


@dataclass(frozen=True)
class DescCase:
    desc: spec_descriptor.Descriptor
    operand: readmap.Operand
    layout: ComposedLayout
    start_address: int            # B, the tile's base byte address
    cta_group: int = 1            # the MMA's .cta_group (1 on sm90: wgmma has none)
    m: int = DEFAULT_M            # the MMA's M (64 on sm90)


def _instruction(case: dict, arch: str) -> tuple:
    """(cta_group, m) of the case's MMA; None means the default. On sm90 wgmma has no .cta_group and M = 64."""
    cta_group, m = case.get("cta_group"), case.get("m")
    if arch == "sm90":
        if cta_group not in (None, 1):
            raise SpecError("cta_group", cta_group, "wgmma (sm90) has no .cta_group", MISREAD.id)
        if m not in (None, SM90_M):
            raise SpecError("m", m, "wgmma (sm90) is m64nNkK: M is 64", MISREAD.id)
        return 1, SM90_M
    cta_group = 1 if cta_group is None else cta_group
    m = DEFAULT_M if m is None else m
    if isinstance(cta_group, bool) or cta_group not in mma_shape.CTA_GROUPS:
        raise SpecError("cta_group", cta_group, "expected 1 or 2 (.cta_group::1 or ::2)", mma_shape.M_RULE.id)
    if isinstance(m, bool) or not isinstance(m, int) or m <= 0 or m % 16:
        raise SpecError("m", m, "M is a positive multiple of 16 (the instruction descriptor drops its 4 low "
                        "bits)", mma_shape.M_RULE.id)
    return cta_group, m


@lru_cache(maxsize=4096)
def _parsed(text: str):
    return parse_layout(text)


def parse_case(case: dict, arch: str) -> DescCase:
    """The case document {"descriptor", "dtype", "major", "mn", "k", "layout", "start_address", "kind",
    and optionally "cta_group" and "m"} on `arch`; SpecError when malformed."""
    for key in ("descriptor", "dtype", "major", "mn", "layout", "start_address"):
        if key not in case:
            raise SpecError(key, None, "missing from the desc case", MISREAD.id)
    desc = spec_descriptor.decode(spec_descriptor.check_arch(arch), spec_descriptor.parse_word(case["descriptor"]))
    operand = readmap.make_operand(desc, case["dtype"], case["major"], case["mn"], case.get("k"), case.get("kind"))
    layout = _parsed(case["layout"]) if isinstance(case["layout"], str) else case["layout"]
    if not isinstance(layout, ComposedLayout):
        layout = ComposedLayout(DESCRIPTOR_SWIZZLES["none"], 0, layout)
    start = case["start_address"]
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise SpecError("start_address", start, "a non-negative byte address", MISREAD.id)
    cta_group, m = _instruction(case, desc.arch)
    return DescCase(desc, operand, layout, start, cta_group, m)


def shape(c: DescCase) -> mma_shape.MmaShape:
    """The MMA the case's operand is B of (rule desc.tile.cta_pair_split: N = cta_group x mn). Its K is the
    operand's, but for kinds mxf4 / mxf4nvf4 an operand whose K takes 48 bytes is read by the dense K = 96
    form (the instruction descriptor's bit 31, `instruction_descriptor`): the only one reading 48 bytes."""
    op = c.operand
    k = mma_shape.K96 if op.kind in dtypes.DENSE_SUBBYTE_KINDS and op.k_bytes == 48 else op.k
    return mma_shape.make_shape(op.arch, op.kind, c.cta_group, c.m, c.cta_group * op.mn, k, op.dtype.name,
                                op.major)


# --- The tile's side -----------------------------------------------------------------------------------
def _byte(c: DescCase, offset: int) -> int:
    per_chunk = c.operand.elements_per_chunk
    return (offset // per_chunk) * 16 + dtypes.byte_in_chunk(c.operand.dtype, c.operand.kind, offset % per_chunk)


def linear_address(c: DescCase, mn: int, k: int) -> int:
    """The tile's address of element (mn, k) before its swizzle."""
    return c.start_address + _byte(c, c.layout.offset + evaluate(c.layout.layout, mn, k))


def tile_address(c: DescCase, mn: int, k: int) -> int:
    return c.layout.swizzle(linear_address(c, mn, k))


def tile_swizzle(c: DescCase) -> Optional[str]:
    """The descriptor swizzle name of the layout's swizzle (None: no descriptor swizzle is it)."""
    s = c.layout.swizzle
    if s.bits == 0:
        return "none"
    return next((name for name, d in DESCRIPTOR_SWIZZLES.items() if d == s), None)


def _second_elements(c: DescCase, swizzle: str) -> dict:
    """field -> the element (mn, k) whose distance from (0, 0) it is (the table in the docstring)."""
    T = c.operand.elements_per_chunk
    atom = T * readmap._row_bytes(swizzle) // 16           # elements in one W-byte swizzle row
    if c.operand.major == "K":
        return {"sbo": (8, 0), "lbo": (0, T if swizzle == "none" else atom)}
    if swizzle == "none":
        return {"sbo": (T, 0), "lbo": (0, 8)}
    return {"sbo": (0, 4 if swizzle == "128B_atom32B" else 8), "lbo": (atom, 0)}


def tile_fields(c: DescCase) -> dict:
    """What the tile needs: {"swizzle", "start_address", "sbo", "lbo"}; sbo / lbo are None where the
    instruction does not read the element they lead to (the field is then free)."""
    return dict(_tile_fields(c))


@lru_cache(maxsize=16)          # the rules of one case ask for it in turn
def _tile_fields(c: DescCase) -> dict:
    swizzle = tile_swizzle(c)
    origin = linear_address(c, 0, 0)
    fields = {"swizzle": swizzle, "start_address": origin, "sbo": None, "lbo": None}
    if swizzle is None:
        return fields
    for name, (mn, k) in _second_elements(c, swizzle).items():
        if mn < c.operand.mn and k < c.operand.k:
            fields[name] = linear_address(c, mn, k) - origin
    return fields


SWIZZLE = rule("desc.tile.swizzle", SOURCE,
               "The descriptor's swizzle is the tile layout's swizzle.", subject=SUBJECT)


@SWIZZLE.checker
def _swizzle(c: DescCase):
    want = tile_swizzle(c)
    if c.desc.swizzle != want:
        return f"the descriptor says {c.desc.swizzle}; the tile is swizzled {want or c.layout.swizzle}"
    return None


START = rule("desc.tile.start_address", SOURCE,
             "The descriptor's start address is the tile's linear (unswizzled) address of element (0, 0).",
             subject=SUBJECT)


@START.checker
def _start(c: DescCase):
    want = _tile_fields(c)["start_address"]          # linear_address(c, 0, 0)
    if c.desc.start_address != want:
        return f"start address {c.desc.start_address:#x}; element (0, 0) is at {want:#x}"
    return None


SBO = rule("desc.tile.stride_byte_offset", SOURCE,
           "Where the instruction reads past the first 8-row group (K-major), MN chunk (MN-major, no "
           "swizzle) or R K rows (MN-major, swizzled), SBO is the tile's linear distance to it.",
           subject=SUBJECT)


@SBO.checker
def _sbo(c: DescCase):
    want = _tile_fields(c)["sbo"]
    if want is not None and c.desc.stride_byte_offset != want:
        return f"SBO {c.desc.stride_byte_offset}; the tile's stride is {want}"
    return None


LBO = rule("desc.tile.leading_byte_offset", SOURCE,
           "Where the instruction reads past the first K chunk (K-major, no swizzle), K atom (K-major, "
           "swizzled), 8 K rows (MN-major, no swizzle) or MN atom (MN-major, swizzled), LBO is the tile's "
           "linear distance to it. In the absolute LBO mode a K-major operand's K chunks are read one after "
           "the other from the start address to the end of its 128-byte line, then from the address in LBO "
           "(rule readmap.k48.absolute_split): the tile holds them so.", subject=SUBJECT)


def _absolute_k_chunks(c: DescCase) -> Optional[str]:
    """Absolute LBO mode, K-major: the first K chunk (of row 0) the tile holds elsewhere than the mode reads
    it, its chunks counted from the tile's own element (0, 0) (that address is rule desc.tile.start_address's)."""
    op = c.operand
    origin = linear_address(c, 0, 0)
    first = (readmap.LINE - origin % readmap.LINE) // readmap.CHUNK      # chunks left in the start's line
    for chunk in range(1, op.k_bytes // readmap.CHUNK):
        read = origin + chunk * readmap.CHUNK if chunk < first else \
            c.desc.leading_byte_offset + (chunk - first) * readmap.CHUNK
        held = linear_address(c, 0, chunk * op.elements_per_chunk)
        if read != held:
            return (f"absolute LBO mode reads K chunk {chunk} at {read:#x} (LBO {c.desc.leading_byte_offset:#x}); "
                    f"the tile holds it at {held:#x}")
    return None


@LBO.checker
def _lbo(c: DescCase):
    if c.desc.lbo_mode == "absolute" and c.operand.major == "K":
        return _absolute_k_chunks(c)
    want = _tile_fields(c)["lbo"]      # an MN-major operand reads LBO as a distance in either mode
    if want is not None and c.desc.leading_byte_offset != want:
        return f"LBO {c.desc.leading_byte_offset}; the tile's stride is {want}"
    return None


BASE_OFFSET = rule("desc.tile.base_offset", "tests/hardware/wgmma_sm90_reads.json.gz (rule readmap.swizzle_phase); "
                   "PTX ISA 9.7.16.4.1 Table 41",
                   "With a swizzle, the base offset is 0 modulo the pattern's rows (2 for 32B, 4 for 64B and "
                   "128B_atom32B, 8 for 128B): the tile's swizzle acts on absolute addresses.",
                   subject=SUBJECT, evidence="hardware",
                   note="Table 41's base offset ((start >> 7) & 7) phases the pattern from the start "
                        "instead: right for a tile swizzled relative to its start, wrong for this one.")


@BASE_OFFSET.checker
def _base_offset(c: DescCase):
    if c.desc.swizzle in DESCRIPTOR_SWIZZLES and c.desc.swizzle != "none" \
            and c.desc.base_offset % pattern_rows(c.desc.swizzle):
        return f"base offset {c.desc.base_offset} re-phases the tile's absolute-address swizzle"
    return None


def instruction_descriptor(c: DescCase) -> Optional[instr_desc.InstrDescriptor]:
    """The instruction descriptor of the case's tcgen05.mma (PTX 9.7.16.4.2 Tables 42-44), as far as the case
    says it; None on sm90 (wgmma spells the types and the transposition in its opcode: rules operand.sm90.*).
    A and B of the operand's type, A K-major, B's transpose bit set when it is MN-major (Table 42: transpose =
    MN-major); dense K = 96 (bit 31, Table 44) when K takes 48 bytes; D in F32 (S32 for kind::i8), legal for
    every kind; M and N in their fields where the fields hold them, else 0 (rules mma.shape.m and
    mma.shape.n say what is wrong with them)."""
    op = c.operand
    if c.desc.arch == "sm90":
        return None
    layout = {f.name: f for f in instr_desc.LAYOUTS[op.kind]}
    code = instr_desc.type_code(op.kind, op.dtype.name)
    values = {"atype": code, "btype": code, "transpose_b": int(op.major == "MN")}
    if "dtype" in layout:
        values["dtype"] = dtypes.D_TYPE_CODES["s32" if op.kind == "i8" else "f32"]
    if "k96" in layout:
        values["k96"] = int(op.k_bytes == 48)
    for name, value, shift in (("n_shr3", c.cta_group * op.mn, 3), ("m_shr4", c.m, 4), ("m_shr7", c.m, 7)):
        if name in layout and value % (1 << shift) == 0 and value >> shift < 1 << layout[name].width:
            values[name] = value >> shift
    return instr_desc.encode(op.kind, c.desc.arch, **values)


def violations(c: DescCase) -> list:
    """Every rule the case breaks: the descriptor's, the operand request's, the MMA shape's, its instruction
    descriptor's (tcgen05), and the tile's."""
    idesc = instruction_descriptor(c)
    return (readmap.violations(c.operand) + check_all(mma_shape.SUBJECT, shape(c))
            + (instr_desc.violations(idesc) if idesc is not None else []) + check_all(SUBJECT, c))


def first_misread_by_element(c: DescCase) -> Optional[dict]:
    """The first element (mn, k), in row order, read from elsewhere than the tile holds it, or None: the
    definition (rule desc.tile.reads), element by element."""
    for mn in range(c.operand.mn):
        for k in range(c.operand.k):
            read, held = readmap.element_address(c.operand, mn, k), tile_address(c, mn, k)
            if read != held:
                return {"element": {"mn": mn, "k": k}, "read_from": read, "held_at": held}
    return None


def first_misread(c: DescCase) -> Optional[dict]:
    """first_misread_by_element; while fast paths are on (spec.fast), by rows or by columns, each class of
    lines computed once (spec.fast.cases_desc_case)."""
    return fast.fastest(first_misread_by_element)(c)
