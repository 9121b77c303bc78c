"""The names and tables the solver's modules share: architectures, MMA element types, the descriptor
swizzles (row width, pattern rows, repeat, raw codes) and the TMA swizzle modes (span, repeat).

Transcribed once for solver/ from the manual sections cited per table, independently of spec/ (which
keeps its own transcription; the tests compare the two). Plain Python: no z3 here.
"""
from __future__ import annotations

ARCHES = ("sm90", "sm100", "sm103")
LINE_BYTES = 128          # one swizzle table row / pattern line (PTX 5.5.7, 9.7.16.3.3)

# --- MMA element types (PTX 9.7.15.5 and 9.7.16 Table 39: operand types; bits per element) ----------------
MMA_DTYPE_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
                  "e2m1": 4}

# --- Descriptor swizzles (PTX 9.7.16.3.3 canonical layouts; 9.7.16.10.6 swizzle atoms) ---------------------
DESCRIPTOR_SWIZZLES = ("none", "32B", "64B", "128B", "128B_atom32B")
# W: bytes of one swizzle row; with no swizzle one core-matrix row of 16 bytes (PTX 9.7.16.3.3)
DESCRIPTOR_ROW_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_atom32B": 128}
# 128-byte lines per pattern repeat (PTX Table 41: the repeat in bytes / 128); no swizzle has no pattern
DESCRIPTOR_PATTERN_ROWS = {"32B": 2, "64B": 4, "128B": 8, "128B_atom32B": 4}
# The repeat in bytes (PTX Table 41)
DESCRIPTOR_REPEAT_BYTES = {name: LINE_BYTES * rows for name, rows in DESCRIPTOR_PATTERN_ROWS.items()}
# Raw descriptor swizzle codes: sm90 bits [62,64) (PTX 9.7.15.5.1.2.2); sm100/sm103 bits [61,64) (Table 40)
SM90_SWIZZLE_CODES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SM100_SWIZZLE_CODES = {"none": 0, "128B_atom32B": 1, "128B": 2, "64B": 4, "32B": 6}


def swizzle_codes(arch: str) -> dict:
    """Descriptor swizzle name -> raw code on `arch`."""
    return SM90_SWIZZLE_CODES if arch == "sm90" else SM100_SWIZZLE_CODES


# --- TMA swizzle modes (PTX 5.5.7; CUDA Driver API cuTensorMapEncodeTiled (swizzle)) ---------------------
# The span: bytes of one swizzled box row (32, 64, 96; 128 for every 128B mode)
TMA_SPAN_BYTES = {"32B": 32, "64B": 64, "96B": 96, "128B": 128, "128B_ATOM_32B": 128,
                  "128B_ATOM_32B_FLIP_8B": 128, "128B_ATOM_64B": 128}
# W of a TMA box row: the span; with no swizzle one 16-byte core-matrix row (PTX 9.7.16.3)
TMA_ROW_BYTES = {"NONE": 16, **TMA_SPAN_BYTES}
# The TMA mode that writes what each descriptor swizzle reads (PTX 5.5.7 vs 9.7.16.3.3)
TMA_MODE = {"none": "NONE", "32B": "32B", "64B": "64B", "128B": "128B", "128B_atom32B": "128B_ATOM_32B"}
