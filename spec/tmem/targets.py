"""Which targets have the tcgen05 instructions, and from which PTX ISA version (the Target ISA Notes and
PTX ISA Notes of PTX 9.7.16.7.1, 9.7.16.8.3, 9.7.16.8.4, 9.7.16.9).

tcgen05 exists on the sm_100 family (sm_100a, sm_100f and higher in the family: sm_103a, sm_103f) and
on sm_110a / sm_110f (sm_101 renamed from PTX 9.0). sm_90a (Hopper) and sm_120a (consumer Blackwell)
lack it. tcgen05.ld.red exists only on sm_110a, sm_110f and sm_103f or higher in its family (sm_103a):
not on sm_100a / sm_100f. tcgen05.shift exists only on the architecture-specific targets sm_100a,
sm_103a, sm_110a (ptxas 13.0 refuses it on sm_100f, sm_103f, sm_110f).
"""
from __future__ import annotations

TARGETS = ("sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_120a")
TCGEN05_TARGETS = ("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f")
LD_RED_TARGETS = ("sm_103a", "sm_103f", "sm_110a", "sm_110f")
SHIFT_TARGETS = ("sm_100a", "sm_103a", "sm_110a")    # tcgen05.shift: not on the family (f) targets

# The first PTX ISA version that supports each target (ptxas 13.0 refuses an older .version).
TARGET_PTX = {"sm_90a": (8, 0), "sm_100a": (8, 6), "sm_100f": (8, 8), "sm_103a": (8, 8), "sm_103f": (8, 8),
              "sm_110a": (9, 0), "sm_110f": (9, 0), "sm_120a": (8, 7)}

TCGEN05_PTX = (8, 6)         # tcgen05 introduced in PTX ISA 8.6
LD_RED_PTX = (8, 8)          # tcgen05.ld.red introduced in PTX ISA 8.8


def parse_version(text: str) -> tuple:
    """'9.0' -> (9, 0)."""
    major, _, minor = str(text).partition(".")
    return int(major), int(minor or 0)
