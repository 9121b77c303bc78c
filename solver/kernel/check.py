"""`ptx check`: does every MMA read an operand through a descriptor that reads the tile its author meant?

The author names the operand's tile as `check` takes it: a CuTe layout from (mn, k) to element offsets over
the whole tile (its K mode may span several instructions), optionally composed with a byte-address
swizzle, at a tile address B. Each MMA reading that operand reads one K slice of the tile: the slice
whose element (mn=0, k=KO) has, in the tile's linear layout, the descriptor's start address
(KO = 0, K, 2K, ... for the instruction's K; when none has it, the nearest one, and rule
desc.tile.start_address says so). The slice is then a desc case (spec.cases.desc_case) and its
desc.tile.* rules and first misread element decide.

B is given as LAYOUT@ADDRESS, or taken from the first MMA (in file order, per function) reading the
operand with a known start address: that MMA is taken to read K slice 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from spec.cases import desc_case
from spec.cute.layout import ComposedLayout, product
from spec.cute.notation import parse_layout
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES
from spec.mma import descriptor as desc_mod
from spec.mma import dtypes
from spec.rule import SpecError, check_all, parse_number

from solver.kernel import mma
from solver.kernel.frontend import source

ROLES = ("a", "b")
MAX_K_SLICES = 4096     # K slices of a tile looked at per MMA (4096 x 128 bytes: more than any shared memory)


@dataclass(frozen=True)
class Intended:
    role: str                     # "a" or "b"
    text: str                     # the layout as written
    layout: ComposedLayout
    tile_address: Optional[int]   # B when given


def parse_intended(text: str) -> Intended:
    """OPERAND=LAYOUT[@ADDRESS], OPERAND A or B."""
    role, sep, rest = text.partition("=")
    role = role.strip().lower()
    if not sep or role not in ROLES:
        raise SpecError("layout", text, "expected A=<CuTe layout> or B=<CuTe layout> (optionally @ADDRESS)",
                        source.RULE)
    layout_text, at, address_text = rest.rpartition("@") if "@" in rest else (rest, "", "")
    address = None
    if at:
        try:
            address = parse_number(address_text)
        except ValueError:
            raise SpecError("layout", text, "the tile address after '@' is not a number", source.RULE) from None
    layout = parse_layout(layout_text.strip())
    if not isinstance(layout, ComposedLayout):
        layout = ComposedLayout(DESCRIPTOR_SWIZZLES["none"], 0, layout)
    if layout.layout.rank != 2:
        raise SpecError("layout", layout_text.strip(), "needs two modes, (mn, k)", "layout.notation")
    return Intended(role, layout_text.strip(), layout, address)


def _element_bytes(op: mma.Operand, kind: Optional[str], offset: int) -> int:
    """byte(o) of spec.cases.desc_case: (o div T) * 16 + the element's byte inside its chunk."""
    d = dtypes.dtype(op.dtype)
    kind = kind or dtypes.default_kind(d)
    per_chunk = dtypes.elements_per_chunk(d, kind)
    return (offset // per_chunk) * 16 + dtypes.byte_in_chunk(d, kind, offset % per_chunk)


def _slice_start(intended: Intended, op: mma.Operand, kind, tile_address: int, k_offset: int) -> int:
    return tile_address + _element_bytes(op, kind, intended.layout.offset + intended.layout.layout(0, k_offset))


def _sizes(intended: Intended) -> tuple:
    inner = intended.layout.layout
    return product(inner.shape[0]), product(inner.shape[1])


def _kind(site: mma.Site) -> Optional[str]:
    return site.kind if site.family == "tcgen05" else None


def inferred_tile_address(intended: Intended, sites: list) -> Optional[int]:
    """B from the first site with a known start address: its start is the linear address of (0, 0)."""
    for site in sites:
        op = site.operands[intended.role]
        start = mma.known_fields((desc_mod.START,), op.word)["start_address"] if op.word is not None else None
        if start is not None and op.dtype in dtypes.DTYPES:
            return (start << 4) - _element_bytes(op, _kind(site), intended.layout.offset + intended.layout.layout(0, 0))
    return None


def choose_k_offset(intended: Intended, site: mma.Site, op: mma.Operand, tile_address: int, start: int) -> tuple:
    """(KO, exact): the K slice whose element (0, KO) the start address names, else the nearest."""
    _, k_size = _sizes(intended)
    offsets = list(range(0, k_size - op.k + 1, op.k))
    distance = [abs(_slice_start(intended, op, _kind(site), tile_address, ko) - start) for ko in offsets]
    best = min(range(len(offsets)), key=lambda i: (distance[i], i))
    return offsets[best], distance[best] == 0


def _splits_at(intended: Intended, k_offset: int, k: int) -> bool:
    """L(mn, KO + k) = L(mn, KO) + L(0, k) - L(0, 0) for the instruction's k: the slice is a layout."""
    inner = intended.layout.layout
    base = inner(0, k_offset) - inner(0, 0)
    return all(inner(0, k_offset + j) == base + inner(0, j) for j in range(k))


def check_operand(intended: Intended, site: mma.Site, tile_address: Optional[int]) -> dict:
    op = site.operands[intended.role]
    result = {"function": site.function, "line": site.line, "instruction": site.text, "operand": intended.role,
              "status": "unknown", "descriptor": op.word.hex() if op.word is not None else None,
              "k_offset": None, "tile_address": tile_address, "first_iteration": site.loop is not None,
              "violations": [], "witness": None, "reason": None}
    reason = mma.missing_read_map(site, op)
    if reason is None and tile_address is None:
        reason = "no tile address: no MMA reading this operand has a known start address (give LAYOUT@ADDRESS)"
    if reason is not None:
        result["reason"] = reason
        return result
    mn_size, k_size = _sizes(intended)
    if op.mn > mn_size or op.k > k_size:
        raise SpecError("layout", intended.text, f"covers {mn_size} x {k_size} elements (mn x k); the MMA at "
                        f"line {site.line} reads {op.mn} x {op.k} of operand {intended.role.upper()}", source.RULE)
    if k_size // op.k > MAX_K_SLICES:
        raise SpecError("layout", intended.text, f"its K ({k_size}) holds {k_size // op.k} K slices of the MMA at "
                        f"line {site.line} (K {op.k}), more than the {MAX_K_SLICES} read: a slice is at least 8 "
                        "rows of 16 bytes, so no shared memory holds so many", source.RULE)
    desc = desc_mod.decode(site.arch, op.word.value)
    k_offset, _ = choose_k_offset(intended, site, op, tile_address, desc.start_address)
    result["k_offset"] = k_offset
    if not _splits_at(intended, k_offset, op.k):
        result["reason"] = f"the layout's K mode does not split at K offset {k_offset} into a slice of {op.k}"
        return result
    inner = intended.layout.layout
    slice_layout = ComposedLayout(intended.layout.swizzle,
                                  intended.layout.offset + inner(0, k_offset) - inner(0, 0), inner)
    case = {"descriptor": desc.hex, "dtype": op.dtype, "major": op.major, "mn": op.mn, "k": op.k,
            "layout": slice_layout, "start_address": tile_address, "kind": _kind(site)}
    if site.family == "tcgen05":
        case.update(cta_group=site.cta_group, m=site.m)
    try:
        c = desc_case.parse_case(case, site.arch)
    except SpecError as error:          # the PTX's values (an M or N of 0, ...) break the rule it names
        result.update(status="mismatch", violations=[mma.violation_of(error)])
        return result
    broken = check_all(desc_case.SUBJECT, c)
    witness = desc_case.first_misread(c)
    if witness is not None:
        witness = dict(witness, tile_element={"mn": witness["element"]["mn"],
                                              "k": k_offset + witness["element"]["k"]})
    result.update(status="mismatch" if broken or witness else "match",
                  violations=[v.as_json() for v in broken], witness=witness)
    return result


def check(analysis, intended_list: list) -> dict:
    """Each MMA against the tile meant; an operand the run saw hold one value only is checked with it
    (mma.with_every_iteration)."""
    checks, addresses = [], {}
    every = [mma.with_every_iteration(s, analysis.iterations.get((s.function, s.line))) for s in analysis.sites]
    for intended in intended_list:
        sites = [s for s in every if s.operands[intended.role].source == "descriptor"]
        if not sites:
            raise SpecError("layout", intended.role.upper() + "=" + intended.text, "no MMA in the PTX reads operand "
                            f"{intended.role.upper()} through a shared-memory descriptor", source.RULE)
        addresses[intended.role] = {}
        for function in dict.fromkeys(s.function for s in sites):
            in_function = [s for s in sites if s.function == function]
            address = intended.tile_address
            if address is None:
                address = inferred_tile_address(intended, in_function)
            addresses[intended.role][function] = address
            checks += [check_operand(intended, s, address) for s in in_function]
    checks.sort(key=lambda c: (c["line"], c["operand"]))
    summary = {status: sum(c["status"] == status for c in checks) for status in ("match", "mismatch", "unknown")}
    layouts = {i.role: {"layout": i.text, "tile_address": addresses[i.role],
                        "tile_address_from": "given" if i.tile_address is not None else "first MMA's start address"}
               for i in intended_list}
    summary["unread"] = len(analysis.unread)
    return {"smem_base": analysis.smem_base, "functions": analysis.functions, "layouts": layouts,
            "checks": checks, "summary": summary, "unread": analysis.unread}
