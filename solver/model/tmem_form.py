"""One tcgen05.ld / tcgen05.st / tcgen05.ld.red / tcgen05.cp / tcgen05.shift instruction and its run-time
context, as Z3 constraints: the `tmem` fuzz target's model.

Written from the PTX ISA (9.7.16.1 tensor memory, 128 lanes x 512 columns; 9.7.16.1.1 the address,
lane in bits 31-16, column in bits 15-0; 9.7.16.2.3 and Table 49 shapes, .num and registers; 9.7.16.8.1
lane quarters; 9.7.16.8.2 packing; 9.7.16.8.3 / 9.7.16.8.4 tcgen05.ld, ld.red, st with their Target and
PTX ISA notes; 9.7.16.9.1 tcgen05.cp and 9.7.16.9.2 tcgen05.shift with their Target notes) and from
what ptxas 13.0 was recorded to accept (tests/hardware/tmem_ptxas_forms.json.gz, hardware/README.md
"tcgen05 tensor-memory forms (ptxas)"), independently of spec/tmem, which labels the cases; the tests
compare the two.

The record is field-level:
  op          OPS code: ld, st, ld.red, cp, shift
  shape       SHAPES code; the last, 16x512b, is no shape at all (ptxas: a syntax error)
  num_log2    .num = 2^num_log2, x1 .. x256 (x256 never exists)
  pack        PACKS code: none, .pack::16b, .unpack::16b
  hs, hs_value   immHalfSplitoff given (0/1) and its value (0 when not given)
  registers   how many registers the data vector names
  sync, aligned  the .sync / .aligned qualifiers present (0/1)
  qual        QUALS code: a stray qualifier: none, .cta_group::1, .shared::cta, or (ld/st) the type .u32
              in place of .b32
  operand     OPERANDS code: a wrongly typed operand: none, taddr a .b64 register, a .b64 register in
              the data vector, immHalfSplitoff a register, redval a .b64 register
  target      TARGETS code (the module's .target)
  ptx         PTX_VERSIONS code (the module's .version)
  red_op, red_type, abs, nan   the reduction of ld.red (none / none / 0 / 0 on ld and st, except that
              .abs / .NaN may be written on them)
  warp        the issuing warp's index in the CTA, 0..7
  lane, column   the value of taddr, each a 16-bit field
  cp_shape    CP_SHAPES code (cp): .128x256b .4x256b .128x128b .64x128b .32x128b, or .16x256b (no cp shape)
  multicast   MULTICASTS code (cp): none, .warpx2::02_13, .warpx2::01_23, .warpx4
  fmt         FORMATS code (cp): none, the decompression pairs .b8x16.b6x16_p32 / .b8x16.b4x16_p64, or a
              broken one: .b8x16 alone, the reversed .b6x16_p32.b8x16
  cta_group   .cta_group::N of cp / shift (0: not written); 0 on ld / st / ld.red (a stray one is `qual`)

cp and shift take no .sync / .aligned, no shape of ld's, .num, packing or reduction (those fields hold 0,
registers 1); shift is always written with its .down. operand adds, for cp, an s-desc that is a .b32
register (a .b64 register, set to a shared-memory descriptor, when right).

The footprint (which cells the access touches) uses only what PTX states: a shape moves its lanes
(32 or 16) from taddr's lane, and N*num/32 columns per lane from taddr's column (twice as many with
.pack::16b / .unpack::16b, each cell giving 16 bits); .16x32bx2's second half starts at the 32-bit sum
taddr + immHalfSplitoff. An access whose shape or .num does not exist touches nothing. One constraint
per rule id (the fuzzer's hints and anchors: solver/fuzz/tmem_sampling.py).
tcgen05.cp writes, per ptxas's shapes and CUTLASS's SM100_UTCCP atoms, rows of N/32 columns from taddr's
column into lanes that reach 127 lanes past taddr's lane (96 for .4x256b: one lane per quarter), so its
lane must be 0 (.4x256b: 0..31) and that rule never breaks without the range; tcgen05.shift moves 8
columns of the 32 lanes from taddr's lane, a multiple of 32 (PTX 9.7.16.9.2).
"""
from __future__ import annotations

import z3

from solver.model import field as field_model
from solver.model import tmem as tmem_model
from solver.model.field import between as _between, is_one_of as _is, table as _table

OPS = ("ld", "st", "ld.red", "cp", "shift")
DATA_OPS = ("ld", "st", "ld.red")
SHAPES = ("16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2", "16x512b")
REAL_SHAPES = SHAPES[:-1]
# the shapes' lanes, bits per lane and registers at .x1 (PTX 9.7.16.2.3, Table 49): the access model's tables
SHAPE_LANES, SHAPE_BITS, BASE_REGISTERS = tmem_model.LANES, tmem_model.LANE_BITS, tmem_model.BASE
MAX_REGISTERS = tmem_model.MAX_REGISTERS
MAX_NUM_LOG2 = 8                                  # x256: not a .num (ptxas: unknown modifier)
RED_SHAPES = ("32x32b", "16x32bx2")
PACKS = (None, "pack::16b", "unpack::16b")
QUALS = (None, "cta_group::1", "shared::cta", "u32")
OPERANDS = (None, "taddr_b64", "vector_b64", "splitoff_register", "redval_b64", "sdesc_b32")
TARGETS = ("sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_120a")
TCGEN05_TARGETS = ("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f")   # 9.7.16.8.3 notes
LD_RED_TARGETS = ("sm_103a", "sm_103f", "sm_110a", "sm_110f")
SHIFT_TARGETS = ("sm_100a", "sm_103a", "sm_110a")     # 9.7.16.9.2 notes; ptxas 13.0 refuses the f targets
# The first PTX ISA version of each target (ptxas 13.0: "PTX .version 8.7 does not support .target sm_100f")
TARGET_PTX = {"sm_90a": 80, "sm_100a": 86, "sm_100f": 88, "sm_103a": 88, "sm_103f": 88, "sm_110a": 90,
              "sm_110f": 90, "sm_120a": 87}
PTX_VERSIONS = ("8.0", "8.5", "8.6", "8.7", "8.8", "9.0")
PTX_VALUE = {v: int(v.replace(".", "")) for v in PTX_VERSIONS}            # "8.6" -> 86
TCGEN05_PTX, LD_RED_PTX = 86, 88
RED_OPS = (None, "min", "max", "add")
RED_TYPES = (None, "f32", "u32", "s32", "b32", "f16")
# The targets whose code runs on a GPU of each fuzz arch: "a" targets on their own chip, "f" targets on
# the chips of their family from theirs up (sm_100f on sm_100 and sm_103).
ARCH_TARGETS = {"sm90": ("sm_90a",), "sm100": ("sm_100a", "sm_100f"), "sm103": ("sm_100f", "sm_103a", "sm_103f")}

LANES, COLUMNS, QUARTER = 128, 512, 32                  # 9.7.16.1; 9.7.16.8.1
FIELD = 1 << 16                                         # 16-bit lane / column fields (9.7.16.1.1)
SPLITOFF_LIMIT = 1 << 17

# tcgen05.cp (PTX 9.7.16.9.1, shapes 9.7.16.2.3); the last shape is none (ptxas: "Illegal matrix shape")
CP_SHAPES = ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b", "16x256b")
REAL_CP_SHAPES = CP_SHAPES[:-1]
MULTICASTS = (None, "warpx2::02_13", "warpx2::01_23", "warpx4")
CP_MULTICASTS = {"128x256b": (None,), "4x256b": (None,), "128x128b": (None,),
                 "64x128b": ("warpx2::02_13", "warpx2::01_23"), "32x128b": ("warpx4",)}
FORMATS = (None, "b8x16.b6x16_p32", "b8x16.b4x16_p64", "b8x16", "b6x16_p32.b8x16")
GOOD_FORMATS = FORMATS[:3]
CP_COLUMNS = {"128x256b": 8, "4x256b": 8, "128x128b": 4, "64x128b": 4, "32x128b": 4}      # N / 32
CP_LANE_SPAN = {"128x256b": 128, "4x256b": 97, "128x128b": 128, "64x128b": 128, "32x128b": 128}
SHIFT_LANES, SHIFT_COLUMNS, SHIFT_ALIGN = 32, 8, 32     # .31x256b: 32 lanes read, 8 columns

FIELDS = ("op", "shape", "num_log2", "pack", "hs", "hs_value", "registers", "sync", "aligned", "qual",
          "operand", "target", "ptx", "red_op", "red_type", "abs", "nan", "warp", "lane", "column",
          "cp_shape", "multicast", "fmt", "cta_group")
Record = field_model.record_type("TmemForm", FIELDS)
symbolic_record = Record.symbolic

LD, ST, LD_RED, CP, SHIFT = 0, 1, 2, 3, 4
SPLIT = SHAPES.index("16x32bx2")
BOGUS = SHAPES.index("16x512b")
CP_BOGUS = CP_SHAPES.index("16x256b")


def data(r):
    """ld, st or ld.red: an access with registers."""
    return r.op <= LD_RED


def copying(r):
    return z3.Or(r.op == CP, r.op == SHIFT)


def real_cp_shape(r):
    return r.cp_shape != CP_BOGUS


def cp_multicast_ok(r):
    return z3.Or(*[z3.And(r.cp_shape == CP_SHAPES.index(s), _is(r.multicast, MULTICASTS, *m))
                   for s, m in CP_MULTICASTS.items()])


def num(r):
    return _table(r.num_log2, tuple(range(MAX_NUM_LOG2 + 1)), {k: 1 << k for k in range(MAX_NUM_LOG2 + 1)})


def _per_shape(r, values: dict, default=0):
    """values[shape] * 1 as an If-chain over the shape (0 for the bogus shape)."""
    return _table(r.shape, SHAPES, {s: values.get(s, default) for s in SHAPES}, default)


def base(r):
    return _per_shape(r, BASE_REGISTERS)


def registers_needed(r):
    """base(shape) x num: linear, as an If-chain over the shape of constant x num."""
    n = num(r)
    term = z3.IntVal(0)
    for s in REAL_SHAPES:                  # in SHAPES order: the term (and the fuzz's answers) as they were
        term = z3.If(r.shape == SHAPES.index(s), BASE_REGISTERS[s] * n, term)
    return term


def shape_lanes(r):
    return _per_shape(r, SHAPE_LANES)


def columns(r):
    """Columns one access spans per lane: N*num/32, doubled when a 16-bit (un)pack qualifier is written."""
    n = num(r)
    term = z3.IntVal(0)
    for s in REAL_SHAPES:
        term = z3.If(r.shape == SHAPES.index(s), (SHAPE_BITS[s] // 32) * n, term)
    return z3.If(r.pack != 0, 2 * term, term)


def real_shape(r):
    return r.shape != BOGUS


def well_formed(r):
    """The shape exists and .num is legal for it: the access has a footprint."""
    return z3.And(real_shape(r), registers_needed(r) <= MAX_REGISTERS)


def second_half(r):
    """(lane, column) where .16x32bx2's threads 16-31 start: taddr + immHalfSplitoff as a 32-bit sum."""
    address = (r.lane * FIELD + r.column + r.hs_value) % (1 << 32)
    return address / FIELD, address % FIELD


def domain(r) -> list:
    """Well-formedness of the record, not rules: enum codes, field ranges, and the forms this model
    writes (ld/st carry no reduction operator or type; redval exists on ld.red only; a register
    half-split needs a half-split)."""
    not_data = z3.And(r.shape == 0, r.num_log2 == 0, r.pack == 0, r.hs == 0, r.registers == 1,
                      r.abs == 0, r.nan == 0)
    return [_between(r.op, 0, len(OPS) - 1), _between(r.shape, 0, len(SHAPES) - 1),
            _between(r.num_log2, 0, MAX_NUM_LOG2), _between(r.pack, 0, len(PACKS) - 1),
            _between(r.hs, 0, 1), _between(r.hs_value, -SPLITOFF_LIMIT, SPLITOFF_LIMIT),
            z3.Implies(r.hs == 0, r.hs_value == 0),
            _between(r.registers, 1, 2 * MAX_REGISTERS + 1),
            _between(r.sync, 0, 1), _between(r.aligned, 0, 1), _between(r.qual, 0, len(QUALS) - 1),
            z3.Implies(r.op == LD_RED, r.qual != QUALS.index("u32")),
            _between(r.operand, 0, len(OPERANDS) - 1),
            # a register half-split offset has no value here (spec reads it as 0)
            z3.Implies(r.operand == OPERANDS.index("splitoff_register"), z3.And(r.hs == 1, r.hs_value == 0)),
            z3.Implies(r.operand == OPERANDS.index("redval_b64"), r.op == LD_RED),
            z3.Implies(r.operand == OPERANDS.index("vector_b64"), data(r)),
            z3.Implies(r.operand == OPERANDS.index("sdesc_b32"), r.op == CP),
            _between(r.target, 0, len(TARGETS) - 1), _between(r.ptx, 0, len(PTX_VERSIONS) - 1),
            _between(r.red_op, 0, len(RED_OPS) - 1), _between(r.red_type, 0, len(RED_TYPES) - 1),
            z3.Implies(r.op != LD_RED, z3.And(r.red_op == 0, r.red_type == 0)),
            _between(r.abs, 0, 1), _between(r.nan, 0, 1),
            _between(r.warp, 0, 7), _between(r.lane, 0, FIELD - 1), _between(r.column, 0, FIELD - 1),
            _between(r.cp_shape, 0, len(CP_SHAPES) - 1), _between(r.multicast, 0, len(MULTICASTS) - 1),
            _between(r.fmt, 0, len(FORMATS) - 1), _between(r.cta_group, 0, 2),
            # cp / shift: none of ld's fields; a stray qualifier is .shared::cta or a type (.u32)
            z3.Implies(copying(r), z3.And(not_data, r.qual != QUALS.index("cta_group::1"))),
            z3.Implies(r.op != CP, z3.And(r.cp_shape == 0, r.multicast == 0, r.fmt == 0)),
            z3.Implies(data(r), r.cta_group == 0)]


def ptx_value(r):
    return _table(r.ptx, PTX_VERSIONS, PTX_VALUE)


RULES: dict = {}
_rule = field_model.rule_registry(RULES)


@_rule("tmem.ptx_version")
def _ptx_version(r):
    return ptx_value(r) >= z3.If(r.op == LD_RED, LD_RED_PTX, TCGEN05_PTX)


@_rule("tmem.instruction.sync_aligned")
def _sync(r):
    # ptxas needs .sync on ld/st/ld.red (.aligned is the next rule's) and refuses both on cp / shift
    return z3.If(copying(r), z3.And(r.sync == 0, r.aligned == 0), r.sync == 1)


@_rule("tmem.ld.aligned")
def _aligned(r):
    return z3.Implies(data(r), r.aligned == 1)


@_rule("tmem.target_ptx_version")
def _target_ptx(r):
    return ptx_value(r) >= _table(r.target, TARGETS, TARGET_PTX)


@_rule("tmem.instruction.qualifiers")
def _qualifiers(r):
    return z3.And(r.qual == 0, z3.Implies(copying(r), r.cta_group != 0))   # cp / shift need .cta_group::1/::2


@_rule("tmem.instruction.operands")
def _operands(r):
    return r.operand == 0


@_rule("tmem.target")
def _target(r):
    return z3.Implies(copying(r), _is(r.target, TARGETS, *TCGEN05_TARGETS))


@_rule("tmem.ld.target")
def _ld_target(r):
    return z3.Implies(z3.Or(r.op == LD, r.op == ST), _is(r.target, TARGETS, *TCGEN05_TARGETS))


@_rule("tmem.ld.shape")
def _shape(r):
    return z3.Implies(z3.Or(r.op == LD, r.op == ST), real_shape(r))


@_rule("tmem.ld.num")
def _num(r):
    return z3.Implies(z3.And(data(r), real_shape(r)), registers_needed(r) <= MAX_REGISTERS)


@_rule("tmem.ld.registers")
def _registers(r):
    return z3.Implies(z3.And(data(r), well_formed(r)), r.registers == registers_needed(r))


@_rule("tmem.ld.pack")
def _pack(r):
    return z3.Or(r.pack == 0, z3.And(r.op == LD, r.pack == 1), z3.And(r.op == ST, r.pack == 2))


@_rule("tmem.ld.half_splitoff")
def _half_splitoff(r):
    return z3.Implies(data(r), (r.hs == 1) == (r.shape == SPLIT))


@_rule("tmem.ld.lane_alignment")
def _lane_alignment(r):
    aligned = z3.If(r.shape == SHAPES.index("32x32b"), r.lane % 32 == 0, r.lane % 16 == 0)
    return z3.Implies(z3.And(data(r), real_shape(r)), aligned)


@_rule("tmem.access.lane_quarter")
def _lane_quarter(r):
    first = QUARTER * (r.warp % 4)
    inside = lambda lane, lanes: z3.And(lane >= first, lane + lanes <= first + QUARTER)   # noqa: E731
    lane2, _ = second_half(r)
    return z3.Implies(z3.And(data(r), well_formed(r)),
                      z3.And(inside(r.lane, shape_lanes(r)), z3.Implies(r.shape == SPLIT, inside(lane2, 16))))


@_rule("tmem.address.range")
def _address_range(r):
    inside = lambda lane, column, lanes: z3.And(lane + lanes <= LANES, column + columns(r) <= COLUMNS)  # noqa: E731
    lane2, column2 = second_half(r)
    access = z3.Implies(well_formed(r), z3.And(inside(r.lane, r.column, shape_lanes(r)),
                                               z3.Implies(r.shape == SPLIT, inside(lane2, column2, 16))))
    span = _table(r.cp_shape, CP_SHAPES, {s: CP_LANE_SPAN.get(s, 0) for s in CP_SHAPES})
    width = _table(r.cp_shape, CP_SHAPES, {s: CP_COLUMNS.get(s, 0) for s in CP_SHAPES})
    copy = z3.Implies(z3.And(real_cp_shape(r), cp_multicast_ok(r)),        # a copy that exists
                      z3.And(r.lane + span <= LANES, r.column + width <= COLUMNS))
    shift = z3.And(r.lane + SHIFT_LANES <= LANES, r.column + SHIFT_COLUMNS <= COLUMNS)
    return z3.If(data(r), access, z3.If(r.op == CP, copy, shift))


@_rule("tmem.ld_red.target")
def _red_target(r):
    return z3.Implies(r.op == LD_RED, _is(r.target, TARGETS, *LD_RED_TARGETS))


@_rule("tmem.ld_red.shape")
def _red_shape(r):
    return z3.Implies(r.op == LD_RED, _is(r.shape, SHAPES, *RED_SHAPES))


@_rule("tmem.ld_red.num")
def _red_num(r):
    return z3.Implies(r.op == LD_RED, r.num_log2 >= 1)


@_rule("tmem.ld_red.operation")
def _red_operation(r):
    reduces = z3.And(_is(r.red_op, RED_OPS, "min", "max"), _is(r.red_type, RED_TYPES, "f32", "u32", "s32"))
    return z3.If(r.op == LD_RED, reduces, z3.And(r.abs == 0, r.nan == 0))


@_rule("tmem.ld_red.abs_nan")
def _red_abs_nan(r):
    return z3.Implies(z3.And(r.op == LD_RED, z3.Or(r.abs == 1, r.nan == 1)),
                      r.red_type == RED_TYPES.index("f32"))


@_rule("tmem.cp.shape")
def _cp_shape(r):
    return z3.Implies(r.op == CP, real_cp_shape(r))


@_rule("tmem.cp.multicast")
def _cp_multicast(r):
    return z3.Implies(z3.And(r.op == CP, real_cp_shape(r)), cp_multicast_ok(r))


@_rule("tmem.cp.format")
def _cp_format(r):
    return z3.Implies(r.op == CP, _is(r.fmt, FORMATS, *GOOD_FORMATS))


@_rule("tmem.cp.lane_alignment")
def _cp_lane_alignment(r):
    aligned = z3.If(r.cp_shape == CP_SHAPES.index("4x256b"), r.lane < QUARTER, r.lane == 0)
    return z3.Implies(z3.And(r.op == CP, real_cp_shape(r)), aligned)


@_rule("tmem.shift.target")
def _shift_target(r):
    return z3.Implies(r.op == SHIFT, _is(r.target, TARGETS, *SHIFT_TARGETS))


@_rule("tmem.shift.lane_alignment")
def _shift_lane_alignment(r):
    return z3.Implies(r.op == SHIFT, r.lane % SHIFT_ALIGN == 0)


RULE_IDS = tuple(RULES)


def constraints(r) -> dict:
    return {rule_id: predicate(r) for rule_id, predicate in RULES.items()}


def evaluate(values: dict) -> dict:
    """rule id -> whether concrete field values obey it (substituted into the constraints)."""
    r = symbolic_record()
    return field_model.evaluate(r, constraints(r), values)


def violated(values: dict) -> list:
    """The rule ids (RULE_IDS order) concrete field values break."""
    return [rule_id for rule_id, ok in evaluate(values).items() if not ok]
