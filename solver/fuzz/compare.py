"""Comparing two shared-memory descriptors by what the MMA reads through them, not by their bits.

Two descriptors can differ in bits the instruction never looks at and still read the same bytes: the LBO
of a K-major swizzled tile whose K fits in one swizzle atom (PTX ISA 9.7.15.5.1 "Matrix Descriptor": LBO
is "not used" there and "assumed to be 1"; rule readmap.k_major.swizzled), the SBO of an operand one row
group deep, unused bits on sm90. A test of a descriptor builder that compares words therefore fails
correct builders. `same_reads` compares the read maps instead: the absolute byte address of every operand
element (mn, k) one MMA fetches, as spec.mma.readmap.read_addresses computes it from the descriptor
definitions of PTX 9.7.15.5.1 (wgmma) and 9.7.16.4.1 (tcgen05).

An address is that of the element's first byte (rule readmap.element_byte). Every descriptor field is a
multiple of 16 bytes and every swizzle moves whole 16-byte chunks, so two reads of one element at the same
first byte fetch the same bits, also for 4-bit elements that share a byte.

What this does not say: whether a descriptor breaks a rule (a stray bit, a base offset a swizzle does not
allow). `layoutproof.violations` and `layoutproof check` say that.

The tile is a dict with "dtype", "major" ("K" or "MN"), "mn" and optionally "k" (default: the instruction
K of the dtype) and "kind" (tcgen05): a case of `layoutproof fuzz --target desc`, a tile drawn by
solver.fuzz.strategies.tile_layouts, or a whole fuzz record ({"arch", "case", ...}). Descriptors are
64-bit words (int or "0x..." text) or decoded spec.mma.descriptor.Descriptor values; the arch comes from
the `arch` argument, a Descriptor, or the record / tile's "arch".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes
from spec.mma import readmap
from spec.rule import SpecError


@dataclass(frozen=True)
class ReadDifference:
    """The first element (in row order) the two descriptors read from different addresses, and how many
    of the tile's elements differ in all."""
    mn: int
    k: int
    first_address: int
    second_address: int
    differing: int            # elements read from different addresses
    elements: int             # elements the MMA reads: mn x k


# --- The arguments ----------------------------------------------------------------------------------------
def _unwrap(tile: dict) -> tuple:
    """(the tile's case dict, the arch a fuzz record or the tile names, or None)."""
    if not isinstance(tile, dict):
        raise SpecError("tile", tile, "expected a dict with dtype, major, mn (and k, kind), or a fuzz record")
    if isinstance(tile.get("case"), dict):           # a fuzz record: {"arch", "case", ...}
        return tile["case"], tile.get("arch")
    return tile, tile.get("arch")


def _resolve_arch(arch: Optional[str], tile_arch: Optional[str], first, second) -> str:
    """The one arch of the comparison: given, or from the descriptors, or from the tile; all must agree."""
    named = {a for a in (arch, tile_arch) if a is not None}
    named |= {d.arch for d in (first, second) if isinstance(d, spec_descriptor.Descriptor)}
    if len(named) != 1:
        problem = "no arch: pass arch=, Descriptor values or a tile with 'arch'" if not named else \
            "the descriptors and the tile name different arches: " + ", ".join(sorted(named))
        raise SpecError("arch", arch, problem)
    return spec_descriptor.check_arch(named.pop())


def as_descriptor(word, arch: str) -> spec_descriptor.Descriptor:
    """A Descriptor from a word (int or "0x..." text) or a Descriptor (returned as it is)."""
    if isinstance(word, spec_descriptor.Descriptor):
        return word
    return spec_descriptor.decode(arch, spec_descriptor.parse_word(word))


def _extent_k(case: dict) -> int:
    """The tile's K, or the dtype's instruction K: one K for both descriptors (make_operand's default
    depends on the descriptor's LBO mode, which the two may not share)."""
    if case.get("k") is not None:
        return case["k"]
    d = dtypes.dtype(case["dtype"])
    kind = case.get("kind") or dtypes.default_kind(d)
    return dtypes.default_instruction_k(d, kind)


def _operand(desc: spec_descriptor.Descriptor, case: dict) -> readmap.Operand:
    for key in ("dtype", "major", "mn"):
        if key not in case:
            raise SpecError(key, None, "missing from the tile (it needs dtype, major, mn)")
    return readmap.make_operand(desc, case["dtype"], case["major"], case["mn"], _extent_k(case), case.get("kind"))


# --- The comparison --------------------------------------------------------------------------------------
def first_different_read(first, second, tile: dict, arch: Optional[str] = None) -> Optional[ReadDifference]:
    """The first element (mn, k), in row order, that `first` and `second` make the MMA read from different
    byte addresses of shared memory, with both addresses; None when every element is read from the same
    address (spec.mma.readmap.read_addresses of each)."""
    case, tile_arch = _unwrap(tile)
    arch = _resolve_arch(arch, tile_arch, first, second)
    reads_first = readmap.read_addresses(_operand(as_descriptor(first, arch), case))
    reads_second = readmap.read_addresses(_operand(as_descriptor(second, arch), case))
    differing = [(mn, k, a, b) for mn, (row_a, row_b) in enumerate(zip(reads_first, reads_second))
                 for k, (a, b) in enumerate(zip(row_a, row_b)) if a != b]
    if not differing:
        return None
    mn, k, a, b = differing[0]
    elements = len(reads_first) * len(reads_first[0])
    return ReadDifference(mn, k, a, b, len(differing), elements)


def same_reads(first, second, tile: dict, arch: Optional[str] = None) -> bool:
    """True when the two descriptors make the MMA read every element (mn, k) of `tile` from the same byte
    address: what the hardware means by "the same descriptor", whatever the unused bits hold.

    >>> from solver.fuzz.compare import same_reads
    >>> tile = {"arch": "sm90", "dtype": "bf16", "major": "K", "mn": 64, "k": 16}
    >>> # K-major, 128B swizzle, K = 16 fits one 64-element atom: LBO is not used (PTX 9.7.15.5.1)
    >>> same_reads(0x4000004000010040, 0x4000004000400040, tile)       # LBO 16 vs LBO 1024
    True
    >>> same_reads(0x4000004000010040, 0x4000002000010040, tile)       # SBO 1024 vs SBO 512
    False
    """
    return first_different_read(first, second, tile, arch) is None


# --- Messages ------------------------------------------------------------------------------------------
def describe_descriptor(desc: spec_descriptor.Descriptor) -> str:
    """The word in hex and its fields, addresses and offsets in hex (as the manual's tables give them)."""
    text = (f"{desc.hex}  start_address={desc.start_address:#x} leading_byte_offset={desc.leading_byte_offset:#x} "
            f"stride_byte_offset={desc.stride_byte_offset:#x} base_offset={desc.base_offset} swizzle={desc.swizzle}")
    return text if desc.lbo_mode is None else f"{text} lbo_mode={desc.lbo_mode}"


def describe_tile(case: dict, arch: str) -> str:
    """One line: arch, dtype (kind), major-ness, extents, and where the tile lives when the tile says."""
    kind = f" kind::{case['kind']}" if case.get("kind") else ""
    text = f"{arch} {case['dtype']}{kind} {case['major']}-major mn={case['mn']} k={_extent_k(case)}"
    if "start_address" in case:
        text += f" at {case['start_address']:#x}"
    if "layout" in case:
        text += f": {case['layout']}"
    return text


def _field_changes(a: spec_descriptor.Descriptor, b: spec_descriptor.Descriptor, case: dict, arch: str) -> str:
    """The fields that differ, each marked "not read for this tile" when giving `a` that field of `b` alone
    leaves every read where it was (an LBO the layout does not use, PTX ISA 9.7.15.5.1)."""
    fields_a, fields_b = a.fields_json(), b.fields_json()
    show = lambda v: f"{v:#x}" if isinstance(v, int) and not isinstance(v, bool) else str(v)   # noqa: E731
    changed = []
    for name, value in fields_a.items():
        if value == fields_b[name]:
            continue
        try:
            only_this = spec_descriptor.with_fields(a, **{name: fields_b[name]})
            unread = first_different_read(a, only_this, case, arch) is None
        except SpecError:             # a field value no read map takes (an invalid sm100 swizzle code)
            unread = False
        note = ", not read for this tile" if unread else ""
        changed.append(f"{name} ({show(value)} vs {show(fields_b[name])}{note})")
    return ", ".join(changed)          # reads differ only where a field does


def reads_message(first, second, tile: dict, arch: Optional[str] = None,
                  names: tuple = ("first", "second")) -> Optional[str]:
    """None when the two descriptors read the same bytes of the tile; else a few lines for a test report:
    the first element read differently (mn, k, both addresses), the tile, both descriptors in hex with
    their fields, and the fields that differ."""
    case, tile_arch = _unwrap(tile)
    arch = _resolve_arch(arch, tile_arch, first, second)
    a, b = as_descriptor(first, arch), as_descriptor(second, arch)
    found = first_different_read(a, b, case, arch)
    if found is None:
        return None
    width = max(len(name) for name in names) + 1
    return "\n".join([
        f"the descriptors read the tile differently: element (mn={found.mn}, k={found.k}) is read at "
        f"{found.first_address:#x} by {names[0]}, at {found.second_address:#x} by {names[1]} "
        f"({found.differing} of {found.elements} elements differ)",
        f"  {'tile:':<{width + 1}} {describe_tile(case, arch)}",
        f"  {names[0] + ':':<{width + 1}} {describe_descriptor(a)}",
        f"  {names[1] + ':':<{width + 1}} {describe_descriptor(b)}",
        f"  fields that differ: {_field_changes(a, b, case, arch)}"])


def assert_same_reads(first, second, tile: dict, arch: Optional[str] = None,
                      names: tuple = ("first", "second")) -> None:
    """Raise AssertionError (the reads_message lines, which a pytest report shows in full) unless the two
    descriptors read the same bytes of the tile. `names` label the two in the message, e.g.
    ("built", "expected").

    >>> from solver.fuzz.compare import assert_same_reads
    >>> tile = {"arch": "sm90", "dtype": "bf16", "major": "K", "mn": 64, "k": 16}
    >>> assert_same_reads(0x4000004000010040, 0x4000004000400040, tile)   # LBO unused: passes
    >>> assert_same_reads(0x4000004000010040, 0x4000004100010040, tile, names=("built", "expected"))
    Traceback (most recent call last):
    ...
    AssertionError: the descriptors read the tile differently: element (mn=8, k=0) is read at 0x800 by built, at 0x810 by expected (896 of 1024 elements differ)
      tile:      sm90 bf16 K-major mn=64 k=16
      built:     0x4000004000010040  start_address=0x400 leading_byte_offset=0x10 stride_byte_offset=0x400 base_offset=0 swizzle=128B
      expected:  0x4000004100010040  start_address=0x400 leading_byte_offset=0x10 stride_byte_offset=0x410 base_offset=0 swizzle=128B
      fields that differ: stride_byte_offset (0x400 vs 0x410)
    """
    __tracebackhide__ = True          # pytest shows the caller's line, not this helper's source
    message = reads_message(first, second, tile, arch, names)
    if message is not None:
        raise AssertionError(message)
