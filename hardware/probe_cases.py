"""The wgmma probe's case list: which descriptors the H100 is asked to read through.

Every case reads one operand (A: M = 64, or B: N = 128) through an sm90 descriptor whose fields are
chosen here; the other operand is the one-hot identity block at ONEHOT_BASE. The list covers, for
bf16 and f16 (K- and MN-major), tf32 and e4m3 (K-major, as wgmma requires):
  - every swizzle, with the canonical (CUTLASS) LBO/SBO and with others: gaps, strides off the repeat
    boundary, LBO values that the manual says are unused;
  - start addresses on the repeat boundary, one or more 128-byte lines past it, and inside a line
    (K-major K advance);
  - base offsets: 0, Table 41's value, and for one start per layout all of 0..7.
Addresses in this file are relative to the dynamic shared-memory base (the probe adds it; the
recorded observations hold absolute addresses and the base).
"""
from __future__ import annotations

import itertools
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from spec.mma import descriptor  # noqa: E402  (only to encode fields into the 64-bit word)

PROBE_BYTES = 160 * 1024
ONEHOT_BASE = 160 * 1024
ONEHOT_DESCRIPTOR = descriptor.encode("sm90", ONEHOT_BASE, 2048, 128, "none").raw
REGION = 0x2000                     # the probed layouts start here (+ the deltas below)
ELEMENT_BYTES = {"bf16": 2, "f16": 2, "tf32": 4, "e4m3": 1}
CODE_BASE = {"bf16": 2 * 254 * 128, "f16": 2 * 30 * 1024, "tf32": 2 * 254 * 1024, "e4m3": 2 * 119}
DTYPE_ID = {"bf16": 0, "f16": 1, "tf32": 2, "e4m3": 3}
SWIZZLE_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128}
ROWS = {"none": 1, "32B": 2, "64B": 4, "128B": 8}
OPERAND_MN = {"A": 64, "B": 128}


def digits_needed(dtype: str, smem_base_limit: int = 64 * 1024) -> int:
    slots = (smem_base_limit + PROBE_BYTES) // ELEMENT_BYTES[dtype]
    count, capacity = 1, CODE_BASE[dtype]
    while capacity < slots:
        count, capacity = count + 1, capacity * CODE_BASE[dtype]
    return count


def stride_choices(major: str, swizzle: str, mn: int, dtype: str) -> list:
    """(label, LBO bytes, SBO bytes): the canonical pair first, then others."""
    W, eb = SWIZZLE_BYTES[swizzle], ELEMENT_BYTES[dtype]
    if major == "K":
        groups = mn // 8
        if swizzle == "none":   # core matrix 8 rows x 16 B; K chunk c at c * LBO, row group at SBO
            return [("canonical", groups * 128, 128), ("k-first", 128, 256),
                    ("gapped", 4096, 384)]
        return [("canonical", 16, 8 * W), ("gapped-sbo", 16, 16 * W),
                ("sbo-off-repeat", 16, 8 * W + 128), ("lbo-ignored", 4096, 8 * W)]
    chunks = mn * eb // 16                  # 16-byte MN chunks
    if swizzle == "none":   # core matrix 16 B of MN x 8 K rows; MN chunk at SBO, K group at LBO
        return [("canonical", chunks * 128, 128), ("k-first", 128, 256), ("gapped", 8192, 384)]
    atoms = max(1, chunks // (W // 16))
    return [("canonical", 8 * W, 8 * W * atoms), ("k-first", 8 * W * 2, 8 * W),
            ("lbo-off-repeat", 8 * W + 128, 8 * W * atoms + 2048)]


def start_deltas(major: str, swizzle: str) -> list:
    if swizzle == "none":
        return [0, 16, 128, 512]
    lines = [128 * j for j in range(ROWS[swizzle])]
    inside = [d for d in (32, 64, 96) if major == "K" and d + 32 <= SWIZZLE_BYTES[swizzle]]
    return lines + inside + [128 + 32] * (major == "K" and swizzle == "128B")


def base_offsets(swizzle: str, start: int, sweep: bool) -> list:
    if swizzle == "none":
        return [0, 3] if sweep else [0]
    if sweep:
        return list(range(8))
    return sorted({0, (start >> 7) & 7})


def layouts():
    """(operand, dtype, major, swizzle) combinations wgmma can read."""
    for operand, dtype, major, swizzle in itertools.product(
            ("A", "B"), ("bf16", "f16", "tf32", "e4m3"), ("K", "MN"), ("none", "32B", "64B", "128B")):
        if major == "MN" and dtype not in ("bf16", "f16"):
            continue
        yield operand, dtype, major, swizzle


def cases() -> list:
    found = []
    for operand, dtype, major, swizzle in layouts():
        mn = OPERAND_MN[operand]
        strides = stride_choices(major, swizzle, mn, dtype)
        if dtype == "f16":
            strides = strides[:2]       # f16 shares bf16's paths; keep it to the main layouts
        for label, lbo, sbo in strides:
            for delta in start_deltas(major, swizzle):
                start = REGION + delta
                sweep = label == "canonical" and delta == (128 if swizzle != "none" else 16) and dtype != "f16"
                for bo in base_offsets(swizzle, start, sweep):
                    word = descriptor.encode("sm90", start, lbo, sbo, swizzle, base_offset=bo).raw
                    found.append(dict(operand=operand, dtype=dtype, major=major, swizzle=swizzle,
                                      strides=label, start_address=start, lbo=lbo, sbo=sbo,
                                      base_offset=bo, descriptor=word, mn=mn, k=32 // ELEMENT_BYTES[dtype]))
    found += edge_cases()
    for i, case in enumerate(found):
        case["id"] = i
    return found


def edge_cases() -> list:
    """Layouts outside the rules, to see what the hardware does there: starts inside a line that make
    a K-major row's 32 bytes cross its swizzle row (rule operand.k_slice.inside_line), MN-major starts
    inside a line, row-group strides that are not multiples of 128, and SBO = 0."""
    found = []

    def add(operand, dtype, major, swizzle, label, delta, lbo, sbo, bo=0):
        start = REGION + delta
        word = descriptor.encode("sm90", start, lbo, sbo, swizzle, base_offset=bo).raw
        found.append(dict(operand=operand, dtype=dtype, major=major, swizzle=swizzle, strides=label,
                          start_address=start, lbo=lbo, sbo=sbo, base_offset=bo, descriptor=word,
                          mn=OPERAND_MN[operand], k=32 // ELEMENT_BYTES[dtype]))

    for operand in ("A", "B"):
        for swizzle in ("32B", "64B", "128B"):
            W = SWIZZLE_BYTES[swizzle]
            for delta in range(16, W, 16):
                if delta + 32 > W or delta % 32:
                    add(operand, "bf16", "K", swizzle, "row-crossing", delta, 16, 8 * W)
            add(operand, "bf16", "K", swizzle, "sbo-odd", 0, 16, 8 * W + 16)
            add(operand, "e4m3", "K", swizzle, "sbo-zero", 0, 16, 0)
            for delta in (16, 32, 48):
                add(operand, "bf16", "MN", swizzle, "mn-start-inside-line", delta, 8 * W, 8 * W * 4)
        add(operand, "bf16", "K", "none", "sbo-zero", 0, 1024, 0)
        add(operand, "bf16", "MN", "none", "odd-strides", 0, 16 * 37, 16 * 9)
    return found


if __name__ == "__main__":
    all_cases = cases()
    by_dtype = {}
    for c in all_cases:
        by_dtype[c["dtype"]] = by_dtype.get(c["dtype"], 0) + 1
    print(len(all_cases), "cases", by_dtype)
