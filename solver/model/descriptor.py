"""Shared-memory descriptors as 64-bit Z3 bit-vectors (written from the PTX bit tables, independently
of spec.mma.descriptor): encode is a Concat of fields, decode a set of Extracts."""
from __future__ import annotations

import z3

# (name, lo, width) per arch, from PTX 9.7.15.5.1.2.2 (sm90) and Table 40 (sm100/sm103).
LAYOUTS = {
    "sm90": (("start", 0, 14), ("lbo", 16, 14), ("sbo", 32, 14), ("base_offset", 49, 3),
             ("swizzle", 62, 2)),
    "sm100": (("start", 0, 14), ("lbo", 16, 14), ("sbo", 32, 14), ("fixed", 46, 3),
              ("base_offset", 49, 3), ("lbo_mode", 52, 1), ("swizzle", 61, 3)),
}
LAYOUTS["sm103"] = LAYOUTS["sm100"]
FIXED = {"fixed": 0b001}
BYTE_FIELDS = ("start", "lbo", "sbo")   # stored as bytes >> 4


def encode(arch: str, fields: dict) -> z3.BitVecRef:
    """fields: name -> bit-vector of any width >= the field (byte fields in bytes). Bits outside the
    fields are 0; the fixed field takes its constant."""
    word = z3.BitVecVal(0, 64)
    for name, lo, width in LAYOUTS[arch]:
        if name in FIXED:
            value = z3.BitVecVal(FIXED[name], width)
        else:
            value = fields[name]
            if name in BYTE_FIELDS:
                value = z3.Extract(width + 3, 4, value)
            else:
                value = z3.Extract(width - 1, 0, value)
        word = word | (z3.ZeroExt(64 - width, value) << lo)
    return word


def decode(arch: str, word: z3.BitVecRef, width: int = 32) -> dict:
    """name -> zero-extended `width`-bit value (byte fields in bytes)."""
    fields = {}
    for name, lo, bits in LAYOUTS[arch]:
        value = z3.ZeroExt(width - bits, z3.Extract(lo + bits - 1, lo, word))
        fields[name] = value << 4 if name in BYTE_FIELDS else value
    return fields


def defined_bits(arch: str) -> int:
    return sum(((1 << width) - 1) << lo for _, lo, width in LAYOUTS[arch])


def pack(arch: str, fields: dict) -> int:
    """The concrete 64-bit descriptor of integer field values named as in LAYOUTS (byte fields in bytes,
    stored >> 4). A field not given is 0, the fixed field its constant unless given; names the arch's
    layout lacks are ignored. Values are not masked: callers keep them inside their fields."""
    word = 0
    for name, lo, _ in LAYOUTS[arch]:
        value = fields.get(name, FIXED.get(name, 0))
        word |= (value >> 4 if name in BYTE_FIELDS else value) << lo
    return word
