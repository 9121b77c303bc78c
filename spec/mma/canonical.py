"""Canonical layouts (PTX 9.7.16.3.3), written as the manual writes them: CuTe layouts from element
coordinates ((mn...), (k...)) to element offsets, composed with the byte-address swizzle.

    | Major | Swizzle | Canonical layout without swizzling          | Swizzle       |
    | MN    | none    | ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))        | Swizzle<0,4,3> |
    | MN    | 32B     | ((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))        | Swizzle<1,4,3> |
    | MN    | 64B     | ((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))        | Swizzle<2,4,3> |
    | MN    | 128B    | ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))        | Swizzle<3,4,3> |
    | K     | none    | ((8,m),(T,2k)):((1T,SBO),(1,LBO))           | Swizzle<0,4,3> |
    | K     | 32B     | ((8,m),(T,2k)):((2T,SBO),(1,T))             | Swizzle<1,4,3> |
    | K     | 64B     | ((8,m),(T,2k)):((4T,SBO),(1,T))             | Swizzle<2,4,3> |
    | K     | 128B    | ((8,m),(T,2k)):((8T,SBO),(1,T))             | Swizzle<3,4,3> |

plus sm100's MN-major 128B swizzle with 32B atomicity (atom of 8 chunks x 4 K rows, swizzle-atom
table of 9.7.16.10.6; CUTLASS make_umma_desc): ((T,8,m),(4,k)):((1,T,LBO),(8T,SBO)) with Swizzle<2,5,2>.

T = 128 / bits, m and k count pattern repeats, LBO and SBO are in elements here (the manual's
examples write "LBO = 64*sizeof(tf32)" bytes and put 64 in the layout). The swizzle acts on the byte
address start + offset * bits / 8 (CuTe's smem pointers).
"""
from __future__ import annotations

from dataclasses import dataclass

from spec.cute.layout import ComposedLayout, Layout
from spec.rule import SpecError, rule
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES

CANONICAL_TABLE = rule(
    "canonical.table", "PTX 9.7.16.3.3",
    "The canonical layouts of MN/K-major x none/32B/64B/128B, parameterised by T, m, k, LBO, SBO.")
CANONICAL_ATOM32B = rule(
    "canonical.mn_128b_atom32b", "PTX 9.7.16.10.6 (swizzle atoms: 8x4); CUTLASS make_umma_desc",
    "sm100 MN-major 128B with 32B atomicity: ((T,8,m),(4,k)):((1,T,LBO),(8T,SBO)) o Swizzle<2,5,2>.",
    evidence="cutlass",
    note="PTX gives the atom (8 chunks x 4 K rows) but no canonical-layout row; SBO stepping 4 K rows "
         "is CUTLASS's reading (its own comment writes the K stride as '?T').")
K_MAJOR_2K = rule(
    "canonical.k_major.2k_overlaps", "PTX 9.7.16.3.3 (Figure 189)",
    "Taken literally, the swizzled K-major rows ((8,m),(T,2k)):((W/16*T,SBO),(1,T)) hold 2k chunks "
    "contiguously in a row of W/16 chunks: for 2k > W/16 two elements share an offset (Figure 189's "
    "exact layout, k=2 with 32B swizzle, maps (1,0) and (0,8) both to 8). CUTLASS writes (T,2), "
    "one instruction's K; layoutproof's read map uses LBO past one atom (readmap.k_major.swizzled).",
    evidence="interpretation",
    note="The manual's own example is the evidence that the literal formula overlaps; which layout the "
         "figure meant is not stated. canonical_layout() reproduces the text exactly; the read map "
         "does not follow it past one swizzle atom.")


@dataclass(frozen=True)
class CanonicalParams:
    major: str       # "K" | "MN"
    swizzle: str     # a name of spec.cute.swizzle.DESCRIPTOR_SWIZZLES
    T: int           # elements per 16 bytes
    m: int           # pattern repeats along MN
    k: int           # pattern repeats along K
    lbo: int         # elements
    sbo: int         # elements


def _chunks_per_row(swizzle: str) -> int:
    return {"none": 1, "32B": 2, "64B": 4, "128B": 8, "128B_atom32B": 8}[swizzle]


def canonical_layout(p: CanonicalParams) -> ComposedLayout:
    """The manual's canonical layout for these parameters, exactly as the table writes it."""
    if p.swizzle not in DESCRIPTOR_SWIZZLES:
        raise SpecError("swizzle", p.swizzle, "not a descriptor swizzle", CANONICAL_TABLE.id)
    T, m, k, LBO, SBO = p.T, p.m, p.k, p.lbo, p.sbo
    C = _chunks_per_row(p.swizzle)
    if p.major == "MN":
        if p.swizzle == "none":
            shape, stride = ((T, 1, m), (8, k)), ((1, T, SBO), (1 * T, LBO))
        elif p.swizzle == "128B_atom32B":
            shape, stride = ((T, 8, m), (4, k)), ((1, T, LBO), (8 * T, SBO))
        else:
            shape, stride = ((T, C, m), (8, k)), ((1, T, LBO), (C * T, SBO))
    elif p.major == "K":
        if p.swizzle == "128B_atom32B":
            raise SpecError("swizzle", p.swizzle, "has no K-major canonical layout", CANONICAL_ATOM32B.id)
        if p.swizzle == "none":
            shape, stride = ((8, m), (T, 2 * k)), ((1 * T, SBO), (1, LBO))
        else:
            shape, stride = ((8, m), (T, 2 * k)), ((C * T, SBO), (1, T))
    else:
        raise SpecError("major", p.major, "expected K or MN", CANONICAL_TABLE.id)
    return ComposedLayout(DESCRIPTOR_SWIZZLES[p.swizzle], 0, Layout(shape, stride))


def mn_extent(p: CanonicalParams) -> int:
    return 8 * p.m if p.major == "K" else p.T * _chunks_per_row(p.swizzle) * p.m


def k_extent(p: CanonicalParams) -> int:
    if p.major == "K":
        return p.T * 2 * p.k
    return (4 if p.swizzle == "128B_atom32B" else 8) * p.k


def byte_address(p: CanonicalParams, bits: int, start: int, mn: int, k: int) -> int:
    """Byte address of element (mn, k): the swizzle applied to start + offset * bits / 8.
    (For sub-byte elements: the byte holding the element's first bit.)"""
    composed = canonical_layout(p)
    offset = composed.layout(mn, k)
    return composed.swizzle(start + offset * bits // 8)


def descriptor_bytes(p: CanonicalParams, bits: int) -> dict:
    """LBO and SBO in bytes and their descriptor encodings (>> 4), as the manual's example tables
    list them. For swizzled K-major layouts LBO is 'not used, assumed to be 1' (encoding 1)."""
    lbo_bytes = p.lbo * bits // 8
    sbo_bytes = p.sbo * bits // 8
    unused_lbo = p.major == "K" and p.swizzle != "none"
    return {"lbo_bytes": None if unused_lbo else lbo_bytes,
            "sbo_bytes": sbo_bytes,
            "lbo_encoded": 1 if unused_lbo else lbo_bytes >> 4,
            "sbo_encoded": sbo_bytes >> 4}

