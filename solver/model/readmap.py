"""The descriptor read map as a Z3 bit-vector function, written from the canonical layouts of PTX
9.7.16.3.3 (independently of spec.mma.readmap, which works in chunks and rows).

An element coordinate is split into the canonical layout's modes and dotted with its strides, in
bytes:
    K-major, no swizzle:  ((8,m),(T,2k)):((1T,SBO),(1,LBO))
    K-major, W bytes:     ((8,m),(T,C,k)):((C*T,SBO),(1,T,LBO))        C = W/16 chunks per row
    MN-major, no swizzle: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
    MN-major, W bytes:    ((T,C,m),(R,k)):((1,T,LBO),(C*T,SBO))        R = 8 (4 for 128B_atom32B)
then the descriptor swizzle (solver.model.swizzle) gives the byte read. The 48-byte K of the absolute
LBO mode reads the chunks past the start's 128-byte line from the absolute address in LBO.
"""
from __future__ import annotations

from dataclasses import dataclass

import z3

from solver.model.bitvec import Arith, bv
from solver.model import swizzle as swizzle_model
from solver.model.vocab import DESCRIPTOR_ROW_BYTES as ROW_BYTES


@dataclass(frozen=True)
class Shape:
    """What is concrete in a query: the layout family and the element type."""
    major: str           # "K" | "MN"
    swizzle: str
    bits: int            # element width in bits
    per_chunk: int       # T: elements per 16-byte chunk (16 for padded 4/6-bit types)


@dataclass
class Fields:
    """Symbolic (or constant) descriptor fields, in bytes."""
    start: object
    lbo: object
    sbo: object
    base_offset: object
    absolute_lbo: bool = False


def _element_byte(index, shape: Shape, arith: Arith):
    return z3.UDiv(arith.mul(index, bv(shape.bits)), bv(8))


def linear_address(shape: Shape, f: Fields, mn, k, arith: Arith):
    """(origin, address) before the swizzle."""
    T, W = shape.per_chunk, ROW_BYTES[shape.swizzle]
    C = W // 16
    if shape.major == "K":
        row, group = z3.URem(mn, bv(8)), z3.UDiv(mn, bv(8))
        chunk, inner = z3.UDiv(k, bv(T)), _element_byte(z3.URem(k, bv(T)), shape, arith)
        if shape.swizzle == "none":
            along_k = arith.mul(chunk, f.lbo)
            row_bytes = arith.mul(row, bv(16))
        else:
            along_k = arith.add(arith.mul(z3.URem(chunk, bv(C)), bv(16)),
                                arith.mul(z3.UDiv(chunk, bv(C)), f.lbo))
            row_bytes = arith.mul(row, bv(W))
        base = arith.add(f.start, arith.mul(group, f.sbo), row_bytes, inner)
        if not f.absolute_lbo:
            return f.start, arith.add(base, along_k)
        # 48-byte K: chunks up to the end of the start's line, then from the address in LBO.
        first = z3.UDiv(bv(128) - z3.URem(f.start, bv(128)), bv(16))
        in_first = z3.ULT(chunk, first)
        past_first = z3.If(in_first, bv(0), chunk - first)     # never negative
        second = arith.add(f.lbo, arith.mul(group, f.sbo), row_bytes, inner,
                           arith.mul(past_first, bv(16)))
        return (z3.If(in_first, f.start, f.lbo),
                z3.If(in_first, arith.add(base, arith.mul(chunk, bv(16))), second))
    chunk, inner = z3.UDiv(mn, bv(T)), _element_byte(z3.URem(mn, bv(T)), shape, arith)
    if shape.swizzle == "none":
        offset = arith.add(arith.mul(chunk, f.sbo), arith.mul(z3.URem(k, bv(8)), bv(16)),
                           arith.mul(z3.UDiv(k, bv(8)), f.lbo))
    else:
        R = 4 if shape.swizzle == "128B_atom32B" else 8
        offset = arith.add(arith.mul(z3.URem(chunk, bv(C)), bv(16)),
                           arith.mul(z3.UDiv(chunk, bv(C)), f.lbo),
                           arith.mul(z3.URem(k, bv(R)), bv(W)),
                           arith.mul(z3.UDiv(k, bv(R)), f.sbo))
    return f.start, arith.add(f.start, offset, inner)


def read_address(shape: Shape, f: Fields, mn, k, arith: Arith):
    """The byte the hardware reads for element (mn, k)."""
    _, address = linear_address(shape, f, mn, k, arith)
    return swizzle_model.descriptor_swizzle(address, shape.swizzle, f.base_offset)


def element_bit_address(shape: Shape, f: Fields, mn, k, arith: Arith):
    """read_address * 8 + the element's first bit inside that byte: distinct elements must differ
    here (sub-byte elements share bytes)."""
    index = k if shape.major == "K" else mn
    bit = z3.URem(arith.mul(z3.URem(index, bv(shape.per_chunk)), bv(shape.bits)), bv(8))
    return arith.add(arith.mul(read_address(shape, f, mn, k, arith), bv(8)), bit)
