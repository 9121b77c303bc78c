"""Bugs injected into a kernel's data movement, for measuring what `audit` catches (issue 27's bug
injection; benchmarks/bench_audit.py, tests/solver_tests/kernel/test_audit_corpus.py).

Each mutant changes one thing a compiler could get wrong, in the PTX text or in a tensor map:
* swizzle      a tensor map's swizzle mode (128B <-> 64B, 32B -> 64B, none -> 32B);
* buffer+N     one TMA load's shared-memory destination moved by N bytes (128, 512);
* lbo, sbo     one MMA descriptor's leading / stride byte offset one unit (16 bytes) larger;
* start        one MMA descriptor's start address 32 bytes further (a wrong per-k advance);
* expect_tx    one expect_tx announcing 128 bytes fewer;
* coordinate   one TMA load's coordinate along one dimension moved by that dimension's box;
and in the epilogue (audit/epilogue.py), the first two and the last statement of each kind:
* store_coordinate  a TMA store's coordinate along one dimension moved by that dimension's box;
* store_buffer+128  a TMA store's shared-memory source moved by 128 bytes;
* stmatrix+16  an stmatrix's row address one 16-byte row further;
* st_global+16  a st.global's address 16 bytes further;
* cvt_swap     a packed cvt's two sources swapped (the halves of each pair exchanged).
A register operand is replaced inside a scope of its own: `{ .reg .b64 %lp_mutant; add.s64 %lp_mutant,
%rd5, 65536; <the statement, reading %lp_mutant> }` (PTX ISA 9.0 4.4: a { } block may declare registers).
A mutant may not change what the kernel computes: the hardware ignores LBO for a swizzled K-major operand
(hardware/README.md, "What the H100 showed"), so such an LBO mutant reads what the original reads
(benchmarks/bench_audit.py sets these apart with spec's read map).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Optional

from solver.kernel.audit import operations
from solver.kernel.frontend import source

NEXT_SWIZZLE = {"128B": "64B", "64B": "128B", "32B": "64B", "NONE": "32B"}
DESCRIPTOR_DELTAS = {"lbo": 1 << 16, "sbo": 1 << 32, "start": 2}     # the fields' units (PTX ISA 9.7.15.5.1.2.2)
MUTANT_REGISTER = "%lp_mutant"
EPILOGUE_PER_KIND = 2
EPILOGUE_KINDS = ("store_coordinate", "store_buffer+128", "stmatrix+16", "st_global+16", "cvt_swap")


@dataclass
class Mutant:
    name: str                      # e.g. "buffer+512 line 151"
    kind: str                      # swizzle | buffer+128 | buffer+512 | lbo | sbo | start | expect_tx | coordinate
    text: str
    tensormaps: dict
    line: Optional[int] = None
    notes: list = field(default_factory=list)


def _replace_operand(text: str, line: int, operand: str, register: str, delta: int, width: int) -> Optional[str]:
    """The text with the statement at `line` reading `register` + delta where its operand `operand` read
    `register`: the statement wrapped in a { } scope that declares and computes the new register."""
    lines = text.split("\n")
    statement = lines[line - 1]
    if statement.count(";") != 1:
        return None                                    # (a line of several statements: not mutated)
    new_operand = re.sub(re.escape(register) + r"(?![\w$])", MUTANT_REGISTER, operand, count=1)
    if new_operand == operand or operand not in statement:
        return None
    body = statement.replace(operand, new_operand, 1).strip()
    kind = "b64" if width == 64 else "b32"
    lines[line - 1] = (f"{{ .reg .{kind} {MUTANT_REGISTER}; add.s{width} {MUTANT_REGISTER}, {register}, {delta}; "
                       f"{body} }}")
    return "\n".join(lines)


def _replace_immediate(text: str, line: int, operand: str, value: int) -> Optional[str]:
    lines = text.split("\n")
    statement = lines[line - 1]
    pattern = re.compile(r"(,\s*)" + re.escape(operand.strip()) + r"(\s*;)")
    if len(pattern.findall(statement)) != 1:
        return None
    lines[line - 1] = pattern.sub(lambda m: f"{m.group(1)}{value}{m.group(2)}", statement)
    return "\n".join(lines)


def _register_of(operand: str) -> Optional[str]:
    m = re.match(r"^\[?\s*([%\w$.]+)", operand.strip())
    return m.group(1) if m and not m.group(1).isdigit() else None


def mutants(text: str, tensormaps: dict, kernel: Optional[str] = None) -> list:
    """Every mutant of the kinds above, in a fixed order (the file's order)."""
    module = source.parse(text)
    functions = [f for f in module.functions if f.kind == "entry" and (kernel is None or f.name == kernel)]
    found, epilogue = [], []
    for key, document in sorted(tensormaps.items()):
        swizzle = document.get("swizzle")
        if swizzle in NEXT_SWIZZLE:
            changed = copy.deepcopy(tensormaps)
            changed[key]["swizzle"] = NEXT_SWIZZLE[swizzle]
            found.append(Mutant(f"swizzle {key} {swizzle}->{NEXT_SWIZZLE[swizzle]}", "swizzle", text, changed))
    for function in functions:
        for s in function.statements:
            ins = s.instruction
            if ins is None:
                continue
            if operations.TMA_OPCODE.match(ins.opcode):
                found.extend(_load_mutants(text, tensormaps, function, s))
            elif operations.BARRIER_OPCODE.match(ins.opcode):
                found.extend(_expect_mutants(text, tensormaps, s))
            elif ins.opcode.startswith(("wgmma.mma_async", "tcgen05.mma")):
                found.extend(_descriptor_mutants(text, tensormaps, s))
            epilogue.extend(_epilogue_mutants(text, tensormaps, function, s))
    kinds: dict = {}
    for m in epilogue:                         # the first two and the last of each kind (an epilogue repeats
        kinds.setdefault(m.kind, []).append(m)  # one pattern; a kernel may have two, one for an empty K)
    for group in kinds.values():
        found.extend(group if len(group) <= EPILOGUE_PER_KIND + 1 else group[:EPILOGUE_PER_KIND] + [group[-1]])
    return found


def _epilogue_mutants(text: str, tensormaps: dict, function, statement) -> list:
    ins = statement.instruction
    out = []
    if ins.opcode.startswith("stmatrix"):
        register = _register_of(ins.operands[0])
        mutated = register and _replace_operand(text, statement.line, ins.operands[0], register, 16, 32)
        if mutated:
            out.append(Mutant(f"stmatrix+16 line {statement.line}", "stmatrix+16", mutated, tensormaps, statement.line))
    elif ins.opcode.startswith("st.global"):
        register = _register_of(ins.operands[0])
        mutated = register and _replace_operand(text, statement.line, ins.operands[0], register, 16, 64)
        if mutated:
            out.append(Mutant(f"st_global+16 line {statement.line}", "st_global+16", mutated, tensormaps,
                              statement.line))
    elif ins.base == "cvt" and ins.opcode.split(".")[-2].endswith("x2") and len(ins.operands) == 3:
        a, b = ins.operands[1].strip(), ins.operands[2].strip()
        lines = text.split("\n")
        original = lines[statement.line - 1]
        pair = re.compile(re.escape(a) + r"(\s*),(\s*)" + re.escape(b) + r"(\s*;)")
        swapped = pair.sub(lambda m: f"{b}{m.group(1)},{m.group(2)}{a}{m.group(3)}", original, count=1)
        if a != b and swapped != original and original.count(";") == 1:
            lines[statement.line - 1] = swapped
            out.append(Mutant(f"cvt_swap line {statement.line}", "cvt_swap", "\n".join(lines), tensormaps,
                              statement.line))
    elif operations.TMA_OPCODE.match(ins.opcode):
        try:
            form = operations.tma_form(ins)
        except operations.FormError:
            return []
        if form.kind != "store":
            return []
        register = _register_of(form.smem)
        mutated = register and _replace_operand(text, statement.line, form.smem, register, 128, 32)
        if mutated:
            out.append(Mutant(f"store_buffer+128 line {statement.line}", "store_buffer+128", mutated, tensormaps,
                              statement.line))
        out.extend(_coordinate_mutants(text, tensormaps, function, statement, form, "store_coordinate"))
    return out


def _load_mutants(text: str, tensormaps: dict, function, statement) -> list:
    try:
        form = operations.tma_form(statement.instruction)
    except operations.FormError:
        return []
    if form.kind != "load":
        return []
    out = []
    register = _register_of(form.smem)
    for delta in (128, 512):
        mutated = register and _replace_operand(text, statement.line, form.smem, register, delta, 32)
        if mutated:
            out.append(Mutant(f"buffer+{delta} line {statement.line}", f"buffer+{delta}", mutated, tensormaps,
                              statement.line))
    return out + _coordinate_mutants(text, tensormaps, function, statement, form, "coordinate")


def _coordinate_mutants(text: str, tensormaps: dict, function, statement, form, kind: str) -> list:
    """The copy's coordinate along each dimension moved by the map's box along it."""
    out = []
    source_param, _ = operations.tensormap_source(function.statements, function.params, form.tensormap)
    box = _box_of(tensormaps, function, source_param)
    if box is None:
        return out
    for d, coordinate in enumerate(form.coordinates):
        if d >= len(box):
            break
        register = _register_of(coordinate)
        target = f"[{form.tensormap}, {{{', '.join(form.coordinates)}}}]"
        if register is None or target not in statement.text.replace("\t", " "):
            continue
        shifted = list(form.coordinates)
        shifted[d] = MUTANT_REGISTER
        lines = text.split("\n")
        original = lines[statement.line - 1]
        written = re.search(r"\[\s*" + re.escape(form.tensormap) + r"\s*,\s*\{[^}]*\}\s*\]", original)
        if written is None or original.count(";") != 1:
            continue
        body = (original[:written.start()] + f"[{form.tensormap}, {{{', '.join(shifted)}}}]"
                + original[written.end():]).strip()
        lines[statement.line - 1] = (f"{{ .reg .b32 {MUTANT_REGISTER}; add.s32 {MUTANT_REGISTER}, {register}, {box[d]}; "
                                     f"{body} }}")
        out.append(Mutant(f"{kind} {d}+{box[d]} line {statement.line}", kind, "\n".join(lines), tensormaps,
                          statement.line))
    return out


def _box_of(tensormaps: dict, function, param) -> Optional[list]:
    if param is None:
        return None
    for key, document in tensormaps.items():
        name = function.params[int(key)] if str(key).isdigit() and int(key) < len(function.params) else key
        if name == param.param and param.offset == 0:
            return document.get("boxDim")
    return None


def _expect_mutants(text: str, tensormaps: dict, statement) -> list:
    try:
        form = operations.barrier_form(statement.instruction)
    except operations.FormError:
        return []
    if form.kind not in ("expect_tx", "arrive.expect_tx") or form.amount is None:
        return []
    amount = form.amount.strip()
    if amount.isdigit():
        mutated = _replace_immediate(text, statement.line, amount, int(amount) - 128)
    else:
        mutated = _replace_operand(text, statement.line, amount, amount, -128, 32)
    return [Mutant(f"expect_tx-128 line {statement.line}", "expect_tx", mutated, tensormaps, statement.line)] \
        if mutated else []


def _descriptor_mutants(text: str, tensormaps: dict, statement) -> list:
    ins = statement.instruction
    out = []
    for role, operand in (("A", ins.operands[1]), ("B", ins.operands[2])):
        if operand.startswith(("{", "[")):
            continue
        register = _register_of(operand)
        for kind, delta in DESCRIPTOR_DELTAS.items():
            mutated = register and _replace_operand(text, statement.line, operand, register, delta, 64)
            if mutated:
                out.append(Mutant(f"{kind} {role} line {statement.line}", kind, mutated, tensormaps, statement.line))
    return out
