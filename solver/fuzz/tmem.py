"""Fuzz target `tmem`: one tcgen05.ld / tcgen05.st / tcgen05.ld.red / tcgen05.cp / tcgen05.shift
instruction and its run-time context.

A case is what `layoutproof tmem check` takes (docs/CLI.md): {"ptx": the instruction text, without the
trailing semicolon, "target": the ptxas target, "ptx_version": the module's .version, "warp": the issuing
warp's index in the CTA (0..7), "address": {"lane", "column"}: the value of taddr}. The text names its
operands as the ptxas recording does: %r0 (or %rd0) is taddr, %r1.. the data vector, then redval and a
register half-split offset when there are any; a tcgen05.cp names [%r0] and its s-desc %rd1, a
tcgen05.shift [%r0] (the warp does not matter to them).

Generation: Z3 anchors over solver/model/tmem_form.py's constraints (solver/fuzz/tmem_sampling.py: each of a
new shape: op, shape, .num, pack, target, PTX version), then samples that redraw one to three fields of an
anchor (the register count follows the shape and .num when it matched them; the lane follows the warp into
its quarter), each kept only when spec/tmem/instruction.py labels it with exactly the asked rules. The arch
picks the targets whose code runs on a GPU of that arch (model.ARCH_TARGETS): sm90 sm_90a; sm100 sm_100a,
sm_100f; sm103 sm_100f, sm_103a, sm_103f.

Labels (spec.tmem.instruction.check with warp= and address=): the broken rules are its violations (rules
ptxas enforces) and its undefined rules (those ptxas lets through). The outcome is "refused" when ptxas
refuses the text (the witness quotes why), else "undefined" when only run-time rules break: the manual
calls the access undefined and says nothing of what it does (the witness lists them and, for a lane
outside the warp's quarter or a cell outside tensor memory, the first thread, register and cell that
touches it), else "ok".
"""
from __future__ import annotations

import random
import re
from typing import Iterator, Optional

from spec.tmem import address as tmem_address
from spec.tmem import cp as tmem_cp
from spec.tmem import instruction as tmem_instruction
from spec.tmem import ld_st
from spec.tmem import shift as tmem_shift

from solver.model import tmem_form as model
from solver.fuzz import tmem_sampling as sampling
from solver.fuzz.engine import Stats, anchored, exactly
from solver.fuzz.outcome import catalogue_order, Label

RULE_IDS = model.RULE_IDS
RUN_TIME_NOTE = ("ptxas accepts the text; the manual calls the access undefined (PTX 9.7.16.1, 9.7.16.8.1) and "
                 "states nothing about what it reads or writes; no GPU here runs tcgen05 to observe it")


# --- Rendering the model's values as a case ---------------------------------------------------------------
def _register(index: int, wide: bool = False) -> str:
    return f"%rd{index}" if wide else f"%r{index}"


def copy_text(v: dict) -> str:
    """tcgen05.cp.cta_group.shape{.multicast}{.dst_fmt.src_fmt} [taddr], s-desc or
    tcgen05.shift.cta_group.down [taddr] (PTX 9.7.16.9.1 / 9.7.16.9.2), with any stray qualifiers."""
    op = model.OPS[v["op"]]
    quals = [f"cta_group::{v['cta_group']}"] if v["cta_group"] else []
    quals += [q for q, on in (("sync", v["sync"]), ("aligned", v["aligned"])) if on]
    stray = model.QUALS[v["qual"]]
    if stray == "shared::cta":
        quals.append(stray)
    wrong = model.OPERANDS[v["operand"]]
    taddr = "[" + _register(0, wrong == "taddr_b64") + "]"
    if op == "shift":
        quals.append("down")
        operands = [taddr]
    else:
        quals.append(model.CP_SHAPES[v["cp_shape"]])
        quals += [q for q in (model.MULTICASTS[v["multicast"]], model.FORMATS[v["fmt"]]) if q]
        operands = [taddr, _register(1, wrong != "sdesc_b32")]
    if stray == "u32":
        quals.append("u32")
    return f"tcgen05.{op}." + ".".join(quals) + " " + ", ".join(operands)


def instruction_text(v: dict) -> str:
    """The instruction, in the order PTX 9.7.16.8.3 / 9.7.16.8.4 write it: tcgen05.op.sync.aligned
    .shape.num{.pack}{.redOp{.abs}{.NaN}}.type operands (no trailing semicolon); cp and shift: copy_text."""
    op = model.OPS[v["op"]]
    if op in ("cp", "shift"):
        return copy_text(v)
    quals = [q for q, on in (("sync", v["sync"]), ("aligned", v["aligned"])) if on]
    stray = model.QUALS[v["qual"]]
    if stray in ("cta_group::1", "shared::cta"):
        quals.append(stray)
    quals += [model.SHAPES[v["shape"]], f"x{1 << v['num_log2']}"]
    if v["pack"]:
        quals.append(model.PACKS[v["pack"]])
    if op == "ld.red" and v["red_op"]:
        quals.append(model.RED_OPS[v["red_op"]])
    quals += [q for q, on in (("abs", v["abs"]), ("NaN", v["nan"])) if on]
    if op == "ld.red":
        if v["red_type"]:
            quals.append(model.RED_TYPES[v["red_type"]])
    else:
        quals.append("u32" if stray == "u32" else "b32")
    wrong = model.OPERANDS[v["operand"]]
    n = v["registers"]
    vector = "{" + ", ".join(_register(i + 1, wide=(i == 0 and wrong == "vector_b64")) for i in range(n)) + "}"
    taddr = "[" + _register(0, wrong == "taddr_b64") + "]"
    splitoff = []
    if v["hs"]:
        splitoff = [_register(n + 2) if wrong == "splitoff_register" else str(v["hs_value"])]
    if op == "ld":
        operands = [vector, taddr] + splitoff
    elif op == "st":
        operands = [taddr] + splitoff + [vector]
    else:
        operands = [vector, _register(n + 1, wrong == "redval_b64"), taddr] + splitoff
    return f"tcgen05.{op}." + ".".join(quals) + " " + ", ".join(operands)


def case_of(v: dict) -> dict:
    return {"ptx": instruction_text(v), "target": model.TARGETS[v["target"]],
            "ptx_version": model.PTX_VERSIONS[v["ptx"]], "warp": v["warp"],
            "address": {"lane": v["lane"], "column": v["column"]}}


_MNEMONIC = re.compile(r"^tcgen05\.(ld\.red|ld|st|cp|shift)\.(\S+)\s+(.*)$")
_FORMAT_PARTS = ("b8x16", "b6x16_p32", "b4x16_p64")


def _copy_values(v: dict, op: str, quals: list, rest: str) -> dict:
    v["registers"] = 1
    fmt = []
    for q in quals:
        if q.startswith("cta_group::"):
            v["cta_group"] = int(q[len("cta_group::"):])
        elif q in ("sync", "aligned"):
            v[q] = 1
        elif q in ("shared::cta", "u32"):
            v["qual"] = model.QUALS.index(q)
        elif q in model.CP_SHAPES:
            v["cp_shape"] = model.CP_SHAPES.index(q)
        elif q in model.MULTICASTS:
            v["multicast"] = model.MULTICASTS.index(q)
        elif q in _FORMAT_PARTS:
            fmt.append(q)
    if fmt:
        v["fmt"] = model.FORMATS.index(".".join(fmt))
    parts = [p.strip() for p in rest.split(",")]
    if parts[0].startswith("[%rd"):
        v["operand"] = model.OPERANDS.index("taddr_b64")
    if op == "cp" and not parts[1].startswith("%rd"):
        v["operand"] = model.OPERANDS.index("sdesc_b32")
    return v


def field_values(case: dict) -> dict:
    """The model's field values of a case this module wrote (the inverse of case_of), read from the text
    without spec, so that the Z3 model can judge a case on its own (model.violated)."""
    found = _MNEMONIC.match(case["ptx"])
    if not found:
        raise ValueError(f"not a tmem fuzz case: {case['ptx']!r}")
    op, quals, rest = found.group(1), found.group(2).split("."), found.group(3)
    v = dict.fromkeys(model.FIELDS, 0)
    v.update(op=model.OPS.index(op), target=model.TARGETS.index(case["target"]),
             ptx=model.PTX_VERSIONS.index(case["ptx_version"]), warp=case["warp"],
             lane=case["address"]["lane"], column=case["address"]["column"])
    if op in ("cp", "shift"):
        return _copy_values(v, op, quals, rest)
    for q in quals:
        if q in ("sync", "aligned"):
            v[q] = 1
        elif q in ("cta_group::1", "shared::cta", "u32") and not (q == "u32" and op == "ld.red"):
            v["qual"] = model.QUALS.index(q)
        elif q in model.SHAPES:
            v["shape"] = model.SHAPES.index(q)
        elif re.fullmatch(r"x\d+", q):
            v["num_log2"] = int(q[1:]).bit_length() - 1
        elif q in model.PACKS:
            v["pack"] = model.PACKS.index(q)
        elif q in ("abs", "NaN"):
            v["abs" if q == "abs" else "nan"] = 1
        elif op == "ld.red" and q in model.RED_OPS:
            v["red_op"] = model.RED_OPS.index(q)
        elif op == "ld.red" and q in model.RED_TYPES:
            v["red_type"] = model.RED_TYPES.index(q)
    vector, _, tail = rest.partition("}") if not rest.startswith("[") else ("", "", rest)
    if rest.startswith("["):                                   # st: [taddr]{, imm}, {vector}
        head, _, vector = rest.partition("{")
        parts = [p.strip() for p in head.split(",") if p.strip()]
        vector = vector.rstrip("}")
    else:                                                      # ld / ld.red: {vector}, ...
        vector = vector.lstrip("{")
        parts = [p.strip() for p in tail.split(",") if p.strip()]
    items = [x.strip() for x in vector.split(",") if x.strip()]
    v["registers"] = len(items)
    if items and items[0].startswith("%rd"):
        v["operand"] = model.OPERANDS.index("vector_b64")
    if op == "ld.red":
        redval, parts = parts[0], parts[1:]
        if redval.startswith("%rd"):
            v["operand"] = model.OPERANDS.index("redval_b64")
    taddr, extra = parts[0], parts[1:]
    if taddr.startswith("[%rd"):
        v["operand"] = model.OPERANDS.index("taddr_b64")
    if extra:
        v["hs"] = 1
        if extra[0].startswith("%"):
            v["operand"] = model.OPERANDS.index("splitoff_register")
        else:
            v["hs_value"] = int(extra[0])
    return v


# --- Labels ----------------------------------------------------------------------------------------------
def encoded_address(case: dict) -> int:
    return tmem_address.encode(case["address"]["lane"], case["address"]["column"])


def touched(access: ld_st.TmemAccess) -> Iterator[tuple]:
    """(thread, register, lane, column) of every 16-bit piece the access moves, absolute: the fragment map
    (spec.tmem.ld_st) moved to taddr, threads 16-31 of .16x32bx2 to taddr + immHalfSplitoff."""
    if not access.is_well_formed():
        return
    split = access.shape == "16x32bx2"
    relative = ld_st.fragment_map(access.shape, access.num, access.packed, 0 if split else None)
    first = (access.lane, access.column)
    second = tmem_address.decode(tmem_address.offset(access.address, access.half_splitoff or 0)) if split else first
    for t, pieces in enumerate(relative):
        base_lane, base_column = second if split and t >= 16 else first
        for p, (lane, column, _) in enumerate(pieces):
            yield t, p // 2, base_lane + lane, base_column + column


def _first_touch(access, outside) -> Optional[dict]:
    for thread, register, lane, column in touched(access):
        if outside(lane, column):
            return {"thread": thread, "register": register, "lane": lane, "column": column}
    return None


def run_time_witness(case: dict, undefined_ids: list, because: list) -> dict:
    """What the run-time breaks are: the rules, and the first thread whose register touches a lane outside
    its warp's quarter (tmem.access.lane_quarter) or a cell outside 128 x 512 (tmem.address.range)."""
    witness = {"undefined": undefined_ids, "because": because, "note": RUN_TIME_NOTE}
    instr = tmem_instruction.parse(case["ptx"])
    if instr.kind in ("cp", "shift"):           # the first cell (lane, column) written or shifted outside
        if "tmem.address.range" in undefined_ids:
            taddr = encoded_address(case)
            cells = (tmem_cp.cp_footprint(instr.shape, instr.multicast, taddr) if instr.kind == "cp"
                     else tmem_shift.shift_footprint(taddr))
            outside = sorted(cell for cell in cells if not tmem_address.in_range(*cell))
            witness["address_range"] = {"lanes": tmem_address.LANES, "columns": tmem_address.COLUMNS,
                                        **({"lane": outside[0][0], "column": outside[0][1]} if outside else {})}
        return witness
    access = tmem_instruction.to_access(instr, case["target"], encoded_address(case), case["warp"])
    if "tmem.access.lane_quarter" in undefined_ids:
        quarter = tmem_address.lane_quarter(case["warp"])
        hit = _first_touch(access, lambda lane, _: lane not in quarter)
        witness["lane_quarter"] = {"warp": case["warp"], "quarter": [quarter.start, quarter.stop - 1], **(hit or {})}
    if "tmem.address.range" in undefined_ids:
        hit = _first_touch(access, lambda lane, column: not tmem_address.in_range(lane, column))
        witness["address_range"] = {"lanes": tmem_address.LANES, "columns": tmem_address.COLUMNS, **(hit or {})}
    return witness


def label(case: dict, arch: str, expect=None) -> Optional[Label]:
    """What spec says of a tmem case (SpecError when malformed). With `expect` (a set of rule ids), None
    as soon as the broken rules are known to differ from it (no witness computed)."""
    result = tmem_instruction.check(case["ptx"], case["target"], case["ptx_version"], warp=case["warp"],
                                    address=encoded_address(case))
    order = catalogue_order()
    broken = result["violations"] + result["undefined"]
    ids = tuple(sorted({v.rule.id for v in broken}, key=lambda i: order.get(i, len(order))))
    if expect is not None and set(ids) != set(expect):
        return None
    undefined_ids = [i for i in ids if i in {v.rule.id for v in result["undefined"]}]
    if result["violations"]:
        witness = {"by": "ptxas", "instruction": case["ptx"], "target": case["target"],
                   "ptx_version": case["ptx_version"], "because": [str(v) for v in result["violations"]]}
        if undefined_ids:
            witness["undefined"] = undefined_ids
        return Label(ids, "refused", witness)
    if ids:
        return Label(ids, "undefined", run_time_witness(case, undefined_ids, [str(v) for v in result["undefined"]]))
    return Label(ids, "ok", None)


# --- Sampling ----------------------------------------------------------------------------------------------
def _needed(v: dict) -> int:
    shape = model.SHAPES[v["shape"]]
    return model.BASE_REGISTERS.get(shape, 1) << v["num_log2"]


def _mutators(rng: random.Random, arch: str):
    targets = [model.TARGETS.index(t) for t in model.ARCH_TARGETS[arch]]

    def keep_registers(v, change):
        matched = v["registers"] == _needed(v)
        change()
        if matched:
            v["registers"] = min(_needed(v), 2 * model.MAX_REGISTERS + 1)

    def num(v):
        keep_registers(v, lambda: v.update(num_log2=rng.randrange(model.MAX_NUM_LOG2)))

    def shape(v):
        def change():
            was_split = v["shape"] == model.SPLIT
            v["shape"] = rng.randrange(len(model.REAL_SHAPES))
            if (v["shape"] == model.SPLIT) != was_split and v["operand"] != model.OPERANDS.index("splitoff_register"):
                v["hs"] = int(v["shape"] == model.SPLIT)
                v["hs_value"] = rng.choice((0, 8, 16, 32, 64, 128, 256)) if v["hs"] else 0
        keep_registers(v, change)

    def warp(v):
        offset = v["lane"] - model.QUARTER * (v["warp"] % 4)
        v["warp"] = rng.randrange(8)
        if 0 <= offset < model.QUARTER:
            v["lane"] = model.QUARTER * (v["warp"] % 4) + offset

    def lane(v):
        v["lane"] = model.QUARTER * (v["warp"] % 4) + rng.choice((0, 0, 16, rng.randrange(model.QUARTER)))

    def column(v):
        v["column"] = rng.choice((0, 8, 16, 32, 64, 128, 256, 384, rng.randrange(model.COLUMNS)))

    def target(v):
        v["target"] = rng.choice(targets)

    def ptx(v):
        v["ptx"] = rng.randrange(len(model.PTX_VERSIONS))

    def splitoff(v):
        if v["hs"] and v["operand"] != model.OPERANDS.index("splitoff_register"):
            v["hs_value"] = rng.choice((0, 1, 8, 16, 32, 64, 128, 256, -16, rng.randrange(1 << 10)))

    def reduction(v):
        if v["op"] == model.LD_RED:
            v["red_op"], v["red_type"] = rng.choice((1, 2)), rng.choice((1, 2, 3))
            v["abs"] = v["nan"] = int(v["red_type"] == 1 and rng.random() < 0.3)

    def op(v):
        """Another op; the 16-bit qualifier follows (ld .pack::16b, st .unpack::16b), and so do the
        reduction fields and redval (ld.red only)."""
        v["op"] = rng.choice([o for o in (model.LD, model.ST, model.LD_RED) if o != v["op"]])
        if v["pack"] and v["op"] != model.LD_RED:
            v["pack"] = 1 if v["op"] == model.LD else 2
        if v["op"] == model.LD_RED:
            v["red_op"], v["red_type"] = rng.choice((1, 2)), rng.choice((1, 2, 3))
            if v["qual"] == model.QUALS.index("u32"):
                v["qual"] = 0
        else:
            v["red_op"] = v["red_type"] = 0
            if v["operand"] == model.OPERANDS.index("redval_b64"):
                v["operand"] = 0

    def cp_shape(v):
        """Another cp shape; a multicast that fitted the old shape follows to one that fits the new."""
        if v["op"] == model.CP:
            fitted = model.MULTICASTS[v["multicast"]] in model.CP_MULTICASTS.get(model.CP_SHAPES[v["cp_shape"]], ())
            v["cp_shape"] = rng.randrange(len(model.REAL_CP_SHAPES))
            if fitted:
                v["multicast"] = model.MULTICASTS.index(rng.choice(model.CP_MULTICASTS[model.CP_SHAPES[v["cp_shape"]]]))

    def fmt(v):
        if v["op"] == model.CP:
            v["fmt"] = rng.randrange(len(model.GOOD_FORMATS))

    def cta_group(v):
        if v["op"] in (model.CP, model.SHIFT) and v["cta_group"]:
            v["cta_group"] = rng.choice((1, 2))

    def copy_lane(v):
        if v["op"] == model.SHIFT:
            v["lane"] = rng.choice((0, 32, 64, 96))
        elif v["op"] == model.CP and model.CP_SHAPES[v["cp_shape"]] == "4x256b":
            v["lane"] = rng.randrange(model.QUARTER)

    def data_only(mutate):
        def guarded(v):
            if v["op"] in (model.LD, model.ST, model.LD_RED):
                mutate(v)
        return guarded

    return tuple(data_only(m) for m in (num, shape, lane, splitoff, reduction, op)) + (
        warp, column, target, ptx, cp_shape, fmt, cta_group, copy_lane)


def generate(arch: str, violate: frozenset, count: int, seed: int, stats: Stats) -> Iterator[tuple]:
    rng = random.Random(seed)
    problem = sampling.Problem(arch, violate)
    yield from anchored(problem.next, case_of, exactly(label, arch, violate), _mutators(rng, arch), dict,
                        count, rng, stats, violate)
