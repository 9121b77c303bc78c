"""A block-scaled tile's scale configuration, as Z3 constraints: the `scales` fuzz target's model.

A record is the target's case (solver/fuzz/scales.py): the kind, the scale vector the MMA names
(.scale_vec::NX), the scale type, the layout the quantizer wrote the scales in, the MMA's M and N, the
tile's K and the .cta_group. Written from the manual and the writers' documentation, apart from
spec/scales (which labels the cases; the tests compare the two):
  PTX ISA 9.0 Table 54   .kind::mxf8f6f4 takes 1X, .kind::mxf4 2X, .kind::mxf4nvf4 2X or 4X;
  Table 55               UE4M3 scales only with .kind::mxf4nvf4 and 4X (NVFP4), else UE8M0;
  Table 39               block-scaled kinds: .cta_group::1 M 128, N 8..256 step 8; .cta_group::2 M 128 or
                         256, N 16..256 step 16; one MMA's K is 32 (mxf8f6f4) or 64 (mxf4, mxf4nvf4), and a
                         tile's K is a whole number of them;
  cuBLAS's 1D block-scaling-factor layout (and CUTLASS's, Triton's): the reader the kernels emit copies
                         128 x 4 chunks, so only the interleaved writer is read right.

Domain (not rules): M and N in [1, 512], K in [1, 2048], .cta_group 1 or 2. One constraint per rule id
(the fuzzer's hints and anchors: solver/fuzz/scales_sampling.py).
"""
from __future__ import annotations

import z3

from solver.model import field as field_model
from solver.model.field import between as _between, is_one_of, table

KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")
VECTORS = ("1X", "2X", "4X")
SCALE_TYPES = ("ue8m0", "ue4m3")
LAYOUTS = ("interleaved", "linear-k", "linear-mn")
MMA_K = {"mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}
MAX_MN, MAX_K = 512, 2048
FIELDS = ("kind", "vector", "scale_type", "sf_layout", "m", "n", "k", "cta_group")

Record = field_model.record_type("ScaleConfigRecord", FIELDS)


def symbolic_record(prefix: str = ""):
    return Record.symbolic(prefix)


def domain(r) -> list:
    return [_between(r.kind, 0, len(KINDS) - 1), _between(r.vector, 0, len(VECTORS) - 1),
            _between(r.scale_type, 0, len(SCALE_TYPES) - 1), _between(r.sf_layout, 0, len(LAYOUTS) - 1),
            _between(r.m, 1, MAX_MN), _between(r.n, 1, MAX_MN), _between(r.k, 1, MAX_K),
            _between(r.cta_group, 1, 2)]


def kind_is(r, *names):
    return is_one_of(r.kind, KINDS, *names)


def vector_is(r, *names):
    return is_one_of(r.vector, VECTORS, *names)


RULES: dict = {}
_rule = field_model.rule_registry(RULES)


@_rule("scales.vector.kind")
def _vector(r):
    # Table 54
    return z3.Or(z3.And(kind_is(r, "mxf8f6f4"), vector_is(r, "1X")), z3.And(kind_is(r, "mxf4"), vector_is(r, "2X")),
                 z3.And(kind_is(r, "mxf4nvf4"), vector_is(r, "2X", "4X")))


@_rule("scales.vector.scale_type")
def _scale_type(r):
    # Table 55: UE4M3 is NVFP4's (mxf4nvf4, 4X) alone
    return z3.Implies(r.scale_type == SCALE_TYPES.index("ue4m3"), z3.And(kind_is(r, "mxf4nvf4"), vector_is(r, "4X")))


@_rule("mma.shape.m")
def _m(r):
    # Table 39: .cta_group::1 M 128; ::2 M 128 or 256
    return z3.If(r.cta_group == 1, r.m == 128, z3.Or(r.m == 128, r.m == 256))


@_rule("mma.shape.n")
def _n(r):
    # Table 39: .cta_group::1 N 8..256 step 8; ::2 16..256 step 16
    step = z3.If(r.cta_group == 1, 8, 16)
    return z3.And(r.n % step == 0, r.n >= step, r.n <= 256)


@_rule("scales.path.k_steps")
def _k_steps(r):
    # Table 39: the tile's K is a whole number of MMA Ks
    return r.k % table(r.kind, KINDS, MMA_K) == 0


@_rule("scales.path.interleaved_writer")
def _interleaved(r):
    return r.sf_layout == LAYOUTS.index("interleaved")


RULE_IDS = tuple(RULES)


def constraints(r) -> dict:
    return {rule_id: predicate(r) for rule_id, predicate in RULES.items()}


TERMS = field_model.Terms(symbolic_record, constraints, domain)     # also the terms the fuzz sampling poses over
evaluate, violated, in_domain = TERMS.evaluate, TERMS.violated, TERMS.in_domain
