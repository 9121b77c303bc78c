"""The tcgen05 instruction descriptor (32-bit), PTX 9.7.16.4.2 Tables 42-44.

Table 42, kinds f16 / tf32 / f8f6f4 / i8:
  [0,2) sparsity selector, 2 sparsity, 3 saturate, [4,6) dtype, 6 reserved, [7,10) atype,
  [10,13) btype, 13 negate A, 14 negate B, 15 transpose A, 16 transpose B, [17,23) N >> 3,
  23 reserved, [24,29) M >> 4, 29 reserved, [30,32) maximum shift (.ws).
Table 43, kind mxf8f6f4:
  [0,2) reserved, 2 sparsity, 3 reserved, [4,6) B scale-factor id, 6 reserved, [7,10) atype,
  [10,13) btype, 13/14 negate, 15/16 transpose, [17,23) N >> 3, 23 scale type, [24,27) reserved,
  [27,29) M >> 7, [29,31) A scale-factor id, 31 reserved.
Table 44, kinds mxf4 / mxf4nvf4: as Table 43 but btype is [10,12) with 12 reserved, transpose must be
  0, and bit 31 is the K dimension (0: dense K = 64, 1: dense K = 96).
Transpose bit = 1 means MN-major (0 = K-major).
"""
from __future__ import annotations

from dataclasses import dataclass

from spec.mma import dtypes
from spec.mma.descriptor import BitField
from spec.rule import SpecError, check_all, rule

TABLE42 = (BitField("sparsity_selector", 0, 2), BitField("sparse", 2, 1), BitField("saturate", 3, 1),
           BitField("dtype", 4, 2), BitField("atype", 7, 3), BitField("btype", 10, 3),
           BitField("negate_a", 13, 1), BitField("negate_b", 14, 1), BitField("transpose_a", 15, 1),
           BitField("transpose_b", 16, 1), BitField("n_shr3", 17, 6), BitField("m_shr4", 24, 5),
           BitField("max_shift", 30, 2))
TABLE43 = (BitField("sparse", 2, 1), BitField("b_scale_id", 4, 2), BitField("atype", 7, 3),
           BitField("btype", 10, 3), BitField("negate_a", 13, 1), BitField("negate_b", 14, 1),
           BitField("transpose_a", 15, 1), BitField("transpose_b", 16, 1), BitField("n_shr3", 17, 6),
           BitField("scale_type", 23, 1), BitField("m_shr7", 27, 2), BitField("a_scale_id", 29, 2))
TABLE44 = (BitField("sparse", 2, 1), BitField("b_scale_id", 4, 2), BitField("atype", 7, 3),
           BitField("btype", 10, 2), BitField("negate_a", 13, 1), BitField("negate_b", 14, 1),
           BitField("transpose_a", 15, 1), BitField("transpose_b", 16, 1), BitField("n_shr3", 17, 6),
           BitField("scale_type", 23, 1), BitField("m_shr7", 27, 2), BitField("a_scale_id", 29, 2),
           BitField("k96", 31, 1))
LAYOUTS = {"f16": TABLE42, "tf32": TABLE42, "f8f6f4": TABLE42, "i8": TABLE42,
           "mxf8f6f4": TABLE43, "mxf4": TABLE44, "mxf4nvf4": TABLE44}
D_TYPES_PER_KIND = {"f16": ("f16", "f32"), "tf32": ("f32",), "f8f6f4": ("f16", "f32"), "i8": ("s32",)}

LAYOUT_RULE = rule(
    "idesc.layout", "PTX 9.7.16.4.2 Tables 42-44",
    "tcgen05 instruction descriptor bit fields per kind (Table 42: f16/tf32/f8f6f4/i8; Table 43: "
    "mxf8f6f4; Table 44: mxf4/mxf4nvf4).")


@dataclass(frozen=True)
class InstrDescriptor:
    kind: str
    arch: str
    word: int

    @property
    def fields(self) -> dict:
        return {f.name: f.get(self.word) for f in LAYOUTS[self.kind]}

    def field(self, name: str) -> int:
        return self.fields.get(name, 0)

    @property
    def a_major(self) -> str:
        return "MN" if self.field("transpose_a") else "K"

    @property
    def b_major(self) -> str:
        return "MN" if self.field("transpose_b") else "K"

    @property
    def m(self) -> int:
        return self.field("m_shr4") << 4 if "m_shr4" in self.fields else self.field("m_shr7") << 7

    @property
    def n(self) -> int:
        return self.field("n_shr3") << 3


def _check_kind(kind: str) -> str:
    if kind not in LAYOUTS:
        raise SpecError("kind", kind, "expected one of " + " ".join(LAYOUTS), LAYOUT_RULE.id)
    return kind


def decode(kind: str, word: int, arch: str = "sm100") -> InstrDescriptor:
    if not 0 <= word < 1 << 32:
        raise SpecError("instr_desc", word, "must fit in 32 bits", LAYOUT_RULE.id)
    return InstrDescriptor(_check_kind(kind), arch, word)


def encode(kind: str, arch: str = "sm100", **values: int) -> InstrDescriptor:
    """Fields by name (m and n are accepted and shifted as the table says)."""
    layout = {f.name: f for f in LAYOUTS[_check_kind(kind)]}
    for name, field_name, shift in (("m", "m_shr4", 4), ("m", "m_shr7", 7), ("n", "n_shr3", 3)):
        if name in values and field_name in layout:
            value = values.pop(name)
            if value < 0:
                raise SpecError(name, value, "must not be negative: the field holds it shifted right by "
                                f"{shift}", LAYOUT_RULE.id)
            if value % (1 << shift):
                raise SpecError(name, value, f"must be a multiple of {1 << shift}: the field drops "
                                f"its {shift} low bits", LAYOUT_RULE.id)
            values[field_name] = value >> shift
    word = 0
    for name, value in values.items():
        if name not in layout:
            raise SpecError(name, value, f"not a field of the kind::{kind} instruction descriptor",
                            LAYOUT_RULE.id)
        if not 0 <= value < 1 << layout[name].width:
            raise SpecError(name, value, f"does not fit {layout[name].width} bits", LAYOUT_RULE.id)
        word |= layout[name].put(value)
    return InstrDescriptor(kind, arch, word)


def type_code(kind: str, dtype_name: str) -> int:
    codes = dtypes.AB_TYPE_CODES[_check_kind(kind)]
    if dtype_name not in codes:
        raise SpecError("dtype", dtype_name, f"kind::{kind} has no type code for it", AB_TYPES.id)
    return codes[dtype_name]


def violations(idesc: InstrDescriptor):
    return check_all("instr_desc", idesc)


RESERVED = rule("idesc.reserved_zero", "PTX 9.7.16.4.2 Tables 42-44",
                "Reserved bits of the instruction descriptor are 0.", subject="instr_desc")


@RESERVED.checker
def _reserved(idesc: InstrDescriptor):
    used = sum(f.mask for f in LAYOUTS[idesc.kind])
    stray = idesc.word & ~used & 0xFFFFFFFF
    return f"reserved bits set: {stray:#010x}" if stray else None


AB_TYPES = rule("idesc.ab_type_codes", "PTX 9.7.16.4.2 Tables 42-44",
                "atype and btype hold a type code defined for the kind (e.g. f16: F16 0, BF16 1; "
                "f8f6f4: E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5; mxf4: E2M1 1).", subject="instr_desc")


@AB_TYPES.checker
def _ab_types(idesc: InstrDescriptor):
    legal = set(dtypes.AB_TYPE_CODES[idesc.kind].values())
    for name in ("atype", "btype"):
        if idesc.field(name) not in legal:
            return f"{name} = {idesc.field(name)} is not a kind::{idesc.kind} type code"
    return None


D_TYPE = rule("idesc.d_type_code", "PTX 9.7.16.4.2 Table 42",
              "dtype is F16 (0) or F32 (1) for f16 and f8f6f4, F32 for tf32, S32 (2) for i8.",
              subject="instr_desc")


@D_TYPE.checker
def _d_type(idesc: InstrDescriptor):
    if idesc.kind not in D_TYPES_PER_KIND:
        return None
    legal = {dtypes.D_TYPE_CODES[d] for d in D_TYPES_PER_KIND[idesc.kind]}
    code = idesc.field("dtype")
    return None if code in legal else f"dtype = {code} is not allowed for kind::{idesc.kind}"


TRANSPOSE = rule("idesc.transpose", "PTX 9.7.16 Table 51; Table 44",
                 "Transpose A/B (MN-major) is not supported by kind::mxf4 and kind::mxf4nvf4.",
                 subject="instr_desc")


@TRANSPOSE.checker
def _transpose(idesc: InstrDescriptor):
    if idesc.kind in dtypes.DENSE_SUBBYTE_KINDS and (idesc.field("transpose_a") or idesc.field("transpose_b")):
        return f"kind::{idesc.kind} operands must be K-major (transpose bits 15, 16 = 0)"
    return None


I8_NO_NEGATE = rule("idesc.i8_negate", "PTX 9.7.16 Table 51",
                    "kind::i8 does not support negate A/B.", subject="instr_desc")


@I8_NO_NEGATE.checker
def _i8_negate(idesc: InstrDescriptor):
    if idesc.kind == "i8" and (idesc.field("negate_a") or idesc.field("negate_b")):
        return "kind::i8 with negate A/B set"
    return None


SATURATE = rule("idesc.saturate", "PTX 9.7.16.4.2 Table 42",
                "Saturate (bit 3) applies to kind::i8 only; other kinds keep it 0.", subject="instr_desc")


@SATURATE.checker
def _saturate(idesc: InstrDescriptor):
    if idesc.kind != "i8" and idesc.field("saturate"):
        return f"saturate set for kind::{idesc.kind}"
    return None


K96 = rule("idesc.k96.arch", "PTX 9.7.16.4.2 Table 44 (bit 31); PTX 9.7.16.2.1.1 (Target ISA Note: 'K = 96 is "
           "only supported for following architecture-specific targets: sm_103a')",
           "Bit 31 = 1 (dense K = 96) is for kind::mxf4/mxf4nvf4 on sm103 only (its shapes: rules "
           "mma.shape.k96.cta_group and mma.shape.k96.m).", subject="instr_desc")


@K96.checker
def _k96(idesc: InstrDescriptor):
    if idesc.field("k96") and idesc.arch != "sm103":
        return f"dense K = 96 (bit 31) on {idesc.arch}; it is an sm103 shape"
    return None
