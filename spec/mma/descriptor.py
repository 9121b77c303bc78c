"""Shared-memory matrix descriptors (64-bit): sm90 wgmma and sm100/sm103 tcgen05.

sm90  (PTX 9.7.15.5.1.2.2): start [0,14), LBO [16,30), SBO [32,46), base offset [49,52),
      swizzle [62,64): 0 none, 1 128B, 2 64B, 3 32B. Every other bit is unused.
sm100 (PTX 9.7.16.4.1 Table 40): start [0,14), LBO [16,30), SBO [32,46), fixed 0b001 at [46,49),
      base offset [49,52), LBO mode bit 52, fixed 0 at [53,61), swizzle [61,64):
      0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B; 3, 5, 7 invalid.
sm103 is sm100's format; the absolute LBO mode (bit 52 = 1) is its feature (9.7.16.3.1.2).

Addresses and offsets are 16-byte aligned and stored as (x & 0x3FFFF) >> 4. The encoder here never
masks: a value that does not fit is an error, not a silent clamp.
"""
from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Optional

from spec.rule import SpecError, check_all, parse_number, rule, word_ambiguity

ARCHES = ("sm90", "sm100", "sm103")


@dataclass(frozen=True)
class BitField:
    name: str
    lo: int
    width: int

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.lo

    def get(self, word: int) -> int:
        return (word >> self.lo) & ((1 << self.width) - 1)

    def put(self, value: int) -> int:
        assert 0 <= value < (1 << self.width), (self.name, value)
        return value << self.lo


# --- Bit tables --------------------------------------------------------------------------------------
START = BitField("start_address", 0, 14)
LBO = BitField("leading_byte_offset", 16, 14)
SBO = BitField("stride_byte_offset", 32, 14)
BASE_OFFSET = BitField("base_offset", 49, 3)
SM90_SWIZZLE = BitField("swizzle", 62, 2)
SM100_FIXED = BitField("fixed_0b001", 46, 3)
SM100_LBO_MODE = BitField("lbo_mode", 52, 1)
SM100_SWIZZLE = BitField("swizzle", 61, 3)

SM90_FIELDS = (START, LBO, SBO, BASE_OFFSET, SM90_SWIZZLE)
SM100_FIELDS = (START, LBO, SBO, SM100_FIXED, BASE_OFFSET, SM100_LBO_MODE, SM100_SWIZZLE)
SM100_FIXED_VALUE = 0b001

SM90_SWIZZLE_CODES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SM100_SWIZZLE_CODES = {"none": 0, "128B_atom32B": 1, "128B": 2, "64B": 4, "32B": 6}

SM90_LAYOUT = rule(
    "desc.sm90.layout", "PTX 9.7.15.5.1.2.2",
    "sm90 descriptor: start [0,14), LBO [16,30), SBO [32,46), base offset [49,52), swizzle [62,64) "
    "with 0 none, 1 128B, 2 64B, 3 32B.")
SM100_LAYOUT = rule(
    "desc.sm100.layout", "PTX 9.7.16.4.1 Table 40",
    "sm100/sm103 descriptor: start [0,14), LBO [16,30), SBO [32,46), fixed 0b001 [46,49), base offset "
    "[49,52), LBO mode bit 52, fixed 0 [53,61), swizzle [61,64) with 0 none, 1 128B_atom32B, 2 128B, "
    "4 64B, 6 32B.", note="Table 40 as PTX ISA 9.1 to 9.3 print it (9.7.17.4.1 in 9.3): 14-bit start "
    "address and LBO, bits [53,61) a fixed 0. The model follows it for sm100 and sm103.")
FIELD_ENCODING = rule(
    "desc.field.encoding", "PTX 9.7.15.5.1.2.2; PTX 9.7.16.4.1 Table 40",
    "Start address, LBO and SBO are byte values stored as (x & 0x3FFFF) >> 4: multiples of 16 below "
    "2^18 (262144).")


@dataclass(frozen=True)
class Descriptor:
    """A decoded descriptor. Byte-valued fields are in bytes (the stored value << 4)."""
    arch: str
    start_address: int
    leading_byte_offset: int      # with lbo_mode "absolute": the absolute address of the second chunk
    stride_byte_offset: int
    base_offset: int
    swizzle: str                  # a name from SWIZZLE_CODES, or "invalid(N)" for sm100 codes 3/5/7
    lbo_mode: Optional[str] = None  # "relative" | "absolute" on sm100/sm103, None on sm90
    raw: Optional[int] = None     # the 64-bit word it was decoded from / encodes to

    def fields_json(self) -> dict:
        return {"start_address": self.start_address, "leading_byte_offset": self.leading_byte_offset,
                "stride_byte_offset": self.stride_byte_offset, "base_offset": self.base_offset,
                "lbo_mode": self.lbo_mode, "swizzle": self.swizzle}

    @property
    def hex(self) -> str:
        return format_hex(self.raw)

    def __repr__(self) -> str:
        """The fields, with addresses and the word in hex (as the manual and a debugger show them)."""
        return (f"Descriptor(arch={self.arch!r}, start_address={self.start_address:#x}, "
                f"leading_byte_offset={self.leading_byte_offset:#x}, stride_byte_offset={self.stride_byte_offset:#x}, "
                f"base_offset={self.base_offset}, swizzle={self.swizzle!r}, lbo_mode={self.lbo_mode!r}, "
                f"raw={'None' if self.raw is None else format_hex(self.raw)})")


def format_hex(word: int) -> str:
    return "0x%016x" % word


def canonical_arch(text) -> str:
    """sm90, sm100 or sm103 as users write them: any case, with or without the underscore and the a/f
    suffix of a ptxas target (sm_90a, sm_100a, sm_100f, sm_103a are sm90, sm100, sm100, sm103)."""
    found = re.fullmatch(r"sm_?(\d+)[af]?", text.strip().lower()) if isinstance(text, str) else None
    if found is None or f"sm{found.group(1)}" not in ARCHES:
        raise SpecError("arch", text, "unknown arch; expected sm90, sm100 or sm103 (sm_90a, sm_100a, sm_103a "
                        "also)", SM90_LAYOUT.id)
    return f"sm{found.group(1)}"


def check_arch(arch: str) -> str:
    """The canonical name only (the CLI reads other spellings through canonical_arch first)."""
    if arch not in ARCHES:
        raise SpecError("arch", arch, "unknown arch; expected sm90, sm100 or sm103", SM90_LAYOUT.id)
    return arch


def swizzle_codes(arch: str) -> dict:
    return SM90_SWIZZLE_CODES if check_arch(arch) == "sm90" else SM100_SWIZZLE_CODES


def _encode_bytes(field_name: str, value: int) -> int:
    if value < 0 or value % 16 or value >= 1 << 18:
        raise SpecError(field_name, value, "must be a multiple of 16 in [0, 262144) to be encoded "
                        "as (x >> 4) in 14 bits", FIELD_ENCODING.id)
    return value >> 4


def encode(arch: str, start_address: int, leading_byte_offset: int, stride_byte_offset: int,
           swizzle: str, base_offset: int = 0, lbo_mode: Optional[str] = None) -> Descriptor:
    """Build the 64-bit word. Unrepresentable values raise SpecError; representable but illegal
    combinations are encoded anyway (see `violations`)."""
    check_arch(arch)
    codes = swizzle_codes(arch)
    if swizzle not in codes:
        raise SpecError("swizzle", swizzle, f"not a {arch} descriptor swizzle; expected one of "
                        + " ".join(codes), (SM90_LAYOUT if arch == "sm90" else SM100_LAYOUT).id)
    if not 0 <= base_offset < 8:
        raise SpecError("base_offset", base_offset, "must fit the 3-bit field [49,52): 0..7",
                        FIELD_ENCODING.id)
    word = (START.put(_encode_bytes("start_address", start_address))
            | LBO.put(_encode_bytes("leading_byte_offset", leading_byte_offset))
            | SBO.put(_encode_bytes("stride_byte_offset", stride_byte_offset))
            | BASE_OFFSET.put(base_offset))
    if arch == "sm90":
        if lbo_mode not in (None, "relative"):
            raise SpecError("lbo_mode", lbo_mode, "sm90 descriptors have no LBO mode bit", SM90_LAYOUT.id)
        word |= SM90_SWIZZLE.put(codes[swizzle])
    else:
        mode = lbo_mode or "relative"
        if mode not in ("relative", "absolute"):
            raise SpecError("lbo_mode", mode, "expected relative or absolute", SM100_LAYOUT.id)
        word |= SM100_FIXED.put(SM100_FIXED_VALUE) | SM100_LBO_MODE.put(mode == "absolute")
        word |= SM100_SWIZZLE.put(codes[swizzle])
    return decode(arch, word)


def parse_word(text) -> int:
    """A descriptor as users give it: a 64-bit integer (a JSON number), or text in 0x-hex; bare decimal
    digits only where they cannot be read as hex (spec.rule.word_ambiguity: a descriptor pasted without
    its 0x is refused, not decoded as another word)."""
    if isinstance(text, int) and not isinstance(text, bool):
        if not 0 <= text < 1 << 64:
            raise SpecError("descriptor", text, "does not fit in 64 bits", FIELD_ENCODING.id)
        return text
    ambiguity = word_ambiguity(text, 64)
    if ambiguity:
        raise SpecError("descriptor", text, ambiguity, FIELD_ENCODING.id)
    try:
        word = parse_number(text)
    except ValueError:
        raise SpecError("descriptor", text, "not a hexadecimal (0x...) or decimal number",
                        FIELD_ENCODING.id) from None
    if not 0 <= word < 1 << 64:
        raise SpecError("descriptor", text, "does not fit in 64 bits", FIELD_ENCODING.id)
    return word


def decode(arch: str, word: int) -> Descriptor:
    check_arch(arch)
    if not 0 <= word < 1 << 64:
        raise SpecError("descriptor", word, "does not fit in 64 bits", FIELD_ENCODING.id)
    common = dict(arch=arch, start_address=START.get(word) << 4,
                  leading_byte_offset=LBO.get(word) << 4, stride_byte_offset=SBO.get(word) << 4,
                  base_offset=BASE_OFFSET.get(word), raw=word)
    if arch == "sm90":
        names = {v: k for k, v in SM90_SWIZZLE_CODES.items()}
        return Descriptor(swizzle=names[SM90_SWIZZLE.get(word)], lbo_mode=None, **common)
    names = {v: k for k, v in SM100_SWIZZLE_CODES.items()}
    code = SM100_SWIZZLE.get(word)
    return Descriptor(swizzle=names.get(code, f"invalid({code})"),
                      lbo_mode="absolute" if SM100_LBO_MODE.get(word) else "relative", **common)


def with_fields(desc: Descriptor, **changes) -> Descriptor:
    """Re-encode a descriptor with some fields changed."""
    fields = desc.fields_json()
    fields.update(changes)
    return encode(desc.arch, fields["start_address"], fields["leading_byte_offset"],
                  fields["stride_byte_offset"], fields["swizzle"], fields["base_offset"],
                  fields["lbo_mode"])


def violations(desc: Descriptor):
    return check_all("descriptor", desc)


# --- Constraints on a decoded descriptor: each rule, then its check -----------------------------
def _set_bits(word: int, keep_mask: int) -> int:
    return word & ~keep_mask & ((1 << 64) - 1)


SM90_UNUSED_BITS = rule(
    "desc.sm90.unused_bits_zero", "PTX 9.7.15.5.1.2.2",
    "sm90: the bits outside the five fields ([14,16), [30,32), [46,49), [52,62)) are unused and must be 0.",
    subject="descriptor")


@SM90_UNUSED_BITS.checker
def _sm90_unused(desc: Descriptor):
    if desc.arch != "sm90":
        return None
    stray = _set_bits(desc.raw, sum(f.mask for f in SM90_FIELDS))
    return f"unused bits set: {stray:#018x}" if stray else None


SM100_FIXED_BITS = rule(
    "desc.sm100.fixed_bits", "PTX 9.7.16.4.1 Table 40; CUTLASS mma_sm100_desc.hpp (version_ = 1)",
    "sm100/sm103: bits [46,49) hold the fixed constant 0b001.", subject="descriptor")


@SM100_FIXED_BITS.checker
def _sm100_fixed(desc: Descriptor):
    if desc.arch == "sm90":
        return None
    value = SM100_FIXED.get(desc.raw)
    return None if value == SM100_FIXED_VALUE else f"bits [46,49) = {value:#05b}, must be 0b001"


SM100_ZERO_BITS = rule(
    "desc.sm100.reserved_bits_zero", "PTX 9.7.16.4.1 Table 40",
    "sm100/sm103: bits [14,16), [30,32) and the fixed-zero bits [53,61) must be 0.", subject="descriptor")


@SM100_ZERO_BITS.checker
def _sm100_zero(desc: Descriptor):
    if desc.arch == "sm90":
        return None
    stray = _set_bits(desc.raw, sum(f.mask for f in SM100_FIELDS))
    return f"reserved bits set: {stray:#018x}" if stray else None


SWIZZLE_CODE_VALID = rule(
    "desc.sm100.swizzle_code", "PTX 9.7.16.4.1 Table 40",
    "sm100/sm103 swizzle codes 3, 5 and 7 are invalid.", subject="descriptor")


@SWIZZLE_CODE_VALID.checker
def _swizzle_code(desc: Descriptor):
    if desc.swizzle.startswith("invalid"):
        return f"swizzle code {SM100_SWIZZLE.get(desc.raw)} in bits [61,64) is not defined"
    return None


BASE_OFFSET_NO_SWIZZLE = rule(
    "desc.base_offset.no_swizzle", "PTX 9.7.15.5.1.2.2 (wgmma: base offset 'valid for all swizzling "
    "modes except the no-swizzle mode')",
    "The base offset gives the phase of a swizzle pattern; with no swizzle it must be 0.",
    subject="descriptor",
    note="The wgmma text says so; tcgen05's Table 41 has no such sentence but no pattern to phase "
         "either, so the rule is applied to sm100/sm103 too. CUTLASS comments the field as valid only "
         "for 128B and 64B.")


@BASE_OFFSET_NO_SWIZZLE.checker
def _base_offset_no_swizzle(desc: Descriptor):
    if desc.swizzle == "none" and desc.base_offset:
        return f"base offset {desc.base_offset} with no swizzle"
    return None


LBO_MODE_ARCH = rule(
    "desc.lbo_mode.arch", "PTX ISA 9.7.16.3.1.2, 9.7.16.4.1.1 (absolute address mode for K of 48 bytes)",
    "The absolute LBO mode (bit 52 = 1) exists for the 48-byte K of sm103 (kind::mxf4* with K = 96); "
    "sm100 descriptors keep bit 52 = 0.", subject="descriptor", evidence="interpretation",
    note="PTX 9.7.16.4.1.1: 'The byte address mode for the leading dimension stride is supported on "
         "sm_103a'. Table 40 shows bit 52 for every tcgen05 target; the model flags it on sm100.")


@LBO_MODE_ARCH.checker
def _lbo_mode_arch(desc: Descriptor):
    if desc.lbo_mode == "absolute" and desc.arch != "sm103":
        return f"absolute LBO mode on {desc.arch}; it is the sm103 48-byte-K mode"
    return None


LBO_MODE_SWIZZLE = rule(
    "desc.lbo_mode.absolute.swizzle_128b", "PTX 9.7.16.3.1.2.1 (restriction 1)",
    "Absolute LBO mode supports only 128B swizzle with 16B atomicity.", subject="descriptor")


@LBO_MODE_SWIZZLE.checker
def _lbo_mode_swizzle(desc: Descriptor):
    if desc.lbo_mode == "absolute" and desc.swizzle != "128B":
        return f"absolute LBO mode with swizzle {desc.swizzle}; only 128B (16B atomicity) is allowed"
    return None


LBO_MODE_BASE_OFFSET = rule(
    "desc.lbo_mode.absolute.base_offset_zero", "PTX 9.7.16.3.1.2.1 (restriction 3)",
    "Absolute LBO mode requires the matrix base offset to be 0.", subject="descriptor")


@LBO_MODE_BASE_OFFSET.checker
def _lbo_mode_base_offset(desc: Descriptor):
    if desc.lbo_mode == "absolute" and desc.base_offset != 0:
        return f"absolute LBO mode with base offset {desc.base_offset}; it must be 0"
    return None
