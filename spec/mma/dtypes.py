"""Operand data types: widths, the 128-bit normalisation T, packing in shared memory, and the codes
the tcgen05 instruction descriptor uses (PTX ISA 9.7.16.3.3, 9.7.16.4.2 Tables 42-44).

Shared memory is read in 16-byte chunks. T = 128 / bits is how many elements one chunk holds
(PTX 9.7.16.3.3: "T represents scale factor which normalizes matrix element types to 128-bits").
Sub-byte types read by kind::f8f6f4 / kind::mxf8f6f4 sit in *padded* chunks (.b6x16_p32: 16 x 6-bit
then 4 bytes of padding; .b4x16_p64: 16 x 4-bit then 8 bytes of padding), so a chunk holds 16 of them,
like an 8-bit type. kind::mxf4 / kind::mxf4nvf4 read E2M1 *dense* (.b4x16): 32 per chunk.
"""
from __future__ import annotations

from dataclasses import dataclass

from spec.rule import SpecError, rule

DTYPE_TABLE = rule(
    "dtype.table", "PTX ISA 9.7.16.3.3; 9.7.16.4.2 Tables 42-44",
    "Element widths: f16/bf16 16 bits, tf32/f32 32, e4m3/e5m2/s8/u8 8, e2m3/e3m2 6, e2m1 4; "
    "T = elements per 16-byte chunk = 128/bits, except padded sub-byte packings (16 per chunk).")
PACKING = rule(
    "dtype.subbyte_packing", "PTX ISA 9.7.16.10 (.b6x16_p32, .b4x16_p64, .b4x16)",
    "kind::f8f6f4 and kind::mxf8f6f4 read 6- and 4-bit elements padded, 16 per 16-byte chunk, at bit "
    "offset bits*i of the chunk; kind::mxf4 and kind::mxf4nvf4 read E2M1 dense, 32 per chunk.")
INSTRUCTION_K = rule(
    "dtype.instruction_k", "PTX ISA 9.7.15.5 (wgmma K), 9.7.16.2.1 Table 39 (tcgen05 K)",
    "One MMA reads 32 bytes of K per row (two 16-byte chunks): K = 16 for 16-bit, 8 for 32-bit, 32 for "
    "8-bit and padded sub-byte types, 64 for dense E2M1; sm103 kind::mxf4(nvf4) also has K = 96 (48 B).")


@dataclass(frozen=True)
class DType:
    name: str
    bits: int
    family: str            # "float" or "int"
    sm90: bool             # wgmma reads it from shared memory (PTX 9.7.15.5)
    sm90_mn_major: bool    # wgmma may read it MN-major (transposed): only .f16/.bf16
    sm100_mn_major: bool   # tcgen05 may read it MN-major (PTX ISA 9.7.16 Table 51)
    kinds: tuple           # tcgen05 kinds that read it; the first is the default


DTYPES = {d.name: d for d in (
    DType("f16", 16, "float", True, True, True, ("f16",)),
    DType("bf16", 16, "float", True, True, True, ("f16",)),
    DType("tf32", 32, "float", True, False, True, ("tf32",)),
    DType("f32", 32, "float", True, False, True, ("tf32",)),   # read as tf32 (the low mantissa ignored)
    DType("e4m3", 8, "float", True, False, True, ("f8f6f4", "mxf8f6f4")),
    DType("e5m2", 8, "float", True, False, True, ("f8f6f4", "mxf8f6f4")),
    DType("e2m3", 6, "float", False, False, False, ("f8f6f4", "mxf8f6f4")),
    DType("e3m2", 6, "float", False, False, False, ("f8f6f4", "mxf8f6f4")),
    DType("e2m1", 4, "float", False, False, False, ("mxf4", "mxf4nvf4", "f8f6f4", "mxf8f6f4")),
    DType("s8", 8, "int", True, False, True, ("i8",)),
    DType("u8", 8, "int", True, False, True, ("i8",)),
)}

DENSE_SUBBYTE_KINDS = ("mxf4", "mxf4nvf4")
ALL_KINDS = ("f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")


# Other spellings users write for the same types (PyTorch, Triton, CUTLASS names), any case.
ALIASES = {"bfloat16": "bf16", "float16": "f16", "half": "f16", "fp16": "f16", "float32": "f32", "float": "f32",
           "fp32": "f32", "tfloat32": "tf32", "float8_e4m3": "e4m3", "float8_e4m3fn": "e4m3", "fp8e4nv": "e4m3",
           "float8_e5m2": "e5m2", "fp8e5": "e5m2", "float6_e2m3": "e2m3", "float6_e2m3fn": "e2m3",
           "float6_e3m2": "e3m2", "float6_e3m2fn": "e3m2", "float4_e2m1": "e2m1", "float4_e2m1fn": "e2m1",
           "int8": "s8", "uint8": "u8"}


def canonical_name(name) -> str:
    """The table's name of a dtype spelled `name` (any case; ALIASES: bfloat16 is bf16); SpecError if none."""
    if isinstance(name, str):
        text = name.strip().lower()
        text = ALIASES.get(text, text)
        if text in DTYPES:
            return text
    raise SpecError("dtype", name, "unknown dtype; expected one of " + " ".join(DTYPES) + " (or bfloat16, "
                    "float16, float32, ...)", DTYPE_TABLE.id)


def dtype(name: str) -> DType:
    return DTYPES[name] if name in DTYPES else DTYPES[canonical_name(name)]


def default_kind(d: DType) -> str:
    return d.kinds[0]


def check_kind(d: DType, kind: str) -> str:
    if kind not in ALL_KINDS:
        raise SpecError("kind", kind, "unknown kind; expected one of " + " ".join(ALL_KINDS),
                        DTYPE_TABLE.id)
    if kind not in d.kinds:
        raise SpecError("kind", kind, f"kind::{kind} does not read {d.name}; it is read by "
                        + " ".join(d.kinds), DTYPE_TABLE.id)
    return kind


def elements_per_chunk(d: DType, kind: str) -> int:
    """T: how many elements one 16-byte chunk of shared memory holds."""
    if d.bits >= 8:
        return 128 // d.bits
    return 32 if kind in DENSE_SUBBYTE_KINDS else 16


def byte_in_chunk(d: DType, kind: str, index_in_chunk: int) -> int:
    """Byte offset, inside its chunk, of the first byte of element `index_in_chunk` (0 <= i < T)."""
    return (index_in_chunk * d.bits) // 8


def instruction_k_values(d: DType, kind: str, arch: str) -> tuple:
    """The K extents (in elements) of one MMA instruction reading this type."""
    base = 2 * elements_per_chunk(d, kind)   # two 16-byte chunks = 32 bytes of K
    if arch == "sm103" and d.name == "e2m1" and kind in DENSE_SUBBYTE_KINDS:
        return (base, 3 * elements_per_chunk(d, kind))  # K = 64 and K = 96 (48 bytes)
    return (base,)


def default_instruction_k(d: DType, kind: str) -> int:
    return 2 * elements_per_chunk(d, kind)


# tcgen05 instruction-descriptor type codes (PTX ISA 9.7.16.4.2 Tables 43-44)
AB_TYPE_CODES = {
    "f16": {"f16": 0, "bf16": 1},
    "tf32": {"tf32": 2, "f32": 2},
    "f8f6f4": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5},
    "mxf8f6f4": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5},
    "i8": {"u8": 0, "s8": 1},
    "mxf4": {"e2m1": 1},
    "mxf4nvf4": {"e2m1": 1},
}
D_TYPE_CODES = {"f16": 0, "f32": 1, "s32": 2}
