"""MMA statements: what each wgmma.mma_async / tcgen05.mma reads, decoded with spec/.

wgmma.mma_async (PTX 9.7.15.5.2), sm_90a: shape, D/A/B types and (f16/bf16 only) the transposes are in the
opcode and its immediates:
    wgmma.mma_async{.sp}.sync.aligned.m64nNkK.dtype.atype.btype  d, a-desc|{a regs}, b-desc,
        [sp-meta, sp-sel,] scale-d[, imm-scale-a, imm-scale-b[, imm-trans-a], imm-trans-b];
  the 64-bit descriptors are those of 9.7.15.5.1.2.2 (sm90 layout of spec.mma.descriptor).
tcgen05.mma (PTX 9.7.16.10.9), sm_100a/sm_103a: shape, types and transposes are in the 32-bit instruction
descriptor (9.7.16.4.2 Tables 42-44), the operands' layouts in 64-bit descriptors (9.7.16.4.1 Table 40):
    tcgen05.mma{.sp|.ws}.cta_group::N.kind::K{.block_scale...}{.collector...}  [d-tmem], a-desc|[a-tmem],
        b-desc, [[sp-meta-tmem],] idesc, ...
  With .cta_group::2 each CTA of the pair reads M/2 rows of A and N/2 columns of B through the same
  descriptors (CUTLASS SM100 2x1SM MMA traits: A 2 x (M/2, K), B 2 x (N/2, K); rule desc.tile.cta_pair_split).
  With .sp, A is the compressed half of K (PTX 9.7.16.10.4: sparse A holds K/2 elements per row).
"""
from __future__ import annotations

import dataclasses

import re
from dataclasses import dataclass, field
from typing import Optional

from spec.mma import descriptor as desc_mod
from spec.mma import dtypes, instr_desc, readmap
from spec.mma import shape as mma_shape
from spec.rule import CATALOGUE, SpecError, check_all

from solver.kernel.symbolic import bits
from solver.kernel.frontend.instruction import Instruction, parse_integer

WGMMA_TYPES = ("f16", "bf16", "tf32", "f32", "e4m3", "e5m2", "s8", "u8", "s32", "b1")
MAX_READ_ELEMENTS = 4_000_000     # read-map elements one command computes in all (then: omitted)


@dataclass
class Operand:
    """One operand as the instruction names it and what the evaluator knows of it."""
    role: str                          # "a" or "b"
    source: str                        # "descriptor", "tmem" or "registers"
    text: str                          # the operand as written
    word: Optional[bits.Bits] = None   # the 64-bit descriptor, when source is "descriptor"
    dtype: Optional[str] = None
    major: Optional[str] = None
    mn: Optional[int] = None
    k: Optional[int] = None


@dataclass
class Site:
    function: str
    line: int
    text: str
    family: str                        # "wgmma" or "tcgen05"
    arch: str
    arch_from: str
    qualifiers: list
    guard: Optional[str]
    loop: Optional[object]             # solver.kernel.symbolic.evaluate.Loop: the one containing it whose back branch
                                       # comes last; None outside loops
    operands: dict = field(default_factory=dict)
    kind: Optional[str] = None         # tcgen05 .kind (None on sm90)
    cta_group: int = 1
    sparse: bool = False
    ws: bool = False
    block_scale: bool = False
    m: Optional[int] = None
    n: Optional[int] = None
    k: Optional[int] = None
    d_type: Optional[str] = None
    idesc_text: Optional[str] = None
    idesc_word: Optional[bits.Bits] = None
    work_bound_line: Optional[int] = None   # read after the walk ran out of work there (evaluate)


def _is_memory(operand: str) -> bool:
    return operand.startswith("[")


# --- reading a statement ---------------------------------------------------------------------------------
LEAST_OPERANDS = 4     # wgmma.mma_async: d, a, b, scale-d; tcgen05.mma: [d], a, b, idesc (PTX 9.7.15.5.2, 9.7.16.10.9)


def read_site(ins: Instruction, machine, function: str, arch: str, arch_from: str, loop) -> Site:
    family = "wgmma" if ins.opcode.startswith("wgmma") else "tcgen05"
    if len(ins.operands) < LEAST_OPERANDS:
        raise SpecError("ptx", f"line {ins.line}: {ins.text}", f"{ins.opcode.split('.')[0]} MMA with "
                        f"{len(ins.operands)} operands; it takes at least {LEAST_OPERANDS} (ptxas 13.0: "
                        "'Arguments mismatch')", "")
    site = Site(function, ins.line, ins.text, family, arch, arch_from, list(ins.modifiers), ins.guard, loop)
    site.work_bound_line = machine.work_bound_line
    site.sparse = ins.has("sp")
    if family == "wgmma":
        _read_wgmma(site, ins, machine)
    else:
        _read_tcgen05(site, ins, machine)
    return site


def _read_wgmma(site: Site, ins: Instruction, machine) -> None:
    shape = next((m for m in ins.modifiers if re.fullmatch(r"m\d{1,4}n\d{1,4}k\d{1,4}", m)), None)
    if shape:
        site.m, site.n, site.k = map(int, re.findall(r"\d+", shape))
    types = [m for m in ins.modifiers[ins.modifiers.index(shape) + 1:] if m in WGMMA_TYPES] if shape else []
    site.d_type, a_type, b_type = (types + [None, None, None])[:3]
    ops = ins.operands
    a_text, b_text = ops[1], ops[2]
    a_source = "registers" if a_text.startswith("{") else "descriptor"
    trans_a = trans_b = 0
    if a_type in ("f16", "bf16"):                       # imm-trans-a / imm-trans-b (9.7.15.5.2)
        trans_b = _immediate(ops[-1])
        if a_source == "descriptor":
            trans_a = _immediate(ops[-2])
    a_k = site.k // 2 if site.k and site.sparse else site.k
    site.operands["a"] = Operand("a", a_source, a_text, machine.read(a_text, 64) if a_source == "descriptor" else None,
                                 a_type, _major(trans_a), site.m, a_k)
    site.operands["b"] = Operand("b", "descriptor", b_text, machine.read(b_text, 64), b_type, _major(trans_b),
                                 site.n, site.k)


def _immediate(text: str) -> Optional[int]:
    return parse_integer(text)


def _major(transposed: Optional[int]) -> Optional[str]:
    if transposed is None:
        return None
    return "MN" if transposed else "K"


def _qualifier(ins: Instruction, name: str) -> Optional[str]:
    for m in ins.modifiers:
        if m.startswith(name + "::"):
            return m.split("::", 1)[1]
    return None


def _read_tcgen05(site: Site, ins: Instruction, machine) -> None:
    site.kind = _kind(ins)
    site.cta_group = _cta_group(ins)
    site.ws, site.block_scale = ins.has("ws"), ins.has("block_scale")
    ops = ins.operands
    a_text, b_text = ops[1], ops[2]
    a_source = "tmem" if _is_memory(a_text) else "descriptor"
    idesc_text = next((o for o in ops[3:] if not _is_memory(o) and not o.startswith("{")), None)
    site.idesc_text = idesc_text
    site.idesc_word = machine.read(idesc_text, 32) if idesc_text else bits.unknown(32)
    site.operands["a"] = Operand("a", a_source, a_text, machine.read(a_text, 64) if a_source == "descriptor" else None)
    site.operands["b"] = Operand("b", "descriptor", b_text, machine.read(b_text, 64))
    _shape_from_instr_desc(site)


def _kind(ins: Instruction) -> str:
    """The .kind, which tcgen05.mma must name, one of Tables 42-44's (ptxas 13.0 refuses it without one:
    ".kind modifier required", and any other: "Unknown modifier '.kind::foo'")."""
    kind = _qualifier(ins, "kind")
    if kind not in instr_desc.LAYOUTS:
        raise SpecError("ptx", f"line {ins.line}: {ins.text}", "tcgen05.mma needs .kind:: one of "
                        + ", ".join(instr_desc.LAYOUTS) + " (ptxas 13.0: '.kind modifier required')", "")
    return kind


def _cta_group(ins: Instruction) -> int:
    """.cta_group::1 or ::2, which tcgen05.mma must name (PTX 9.7.16.10.9; ptxas 13.0 refuses it without
    one: ".cta_group modifier required", and any other: "Unknown modifier '.cta_group::3'")."""
    group = _qualifier(ins, "cta_group")
    if group not in ("1", "2"):
        raise SpecError("ptx", f"line {ins.line}: {ins.text}", "tcgen05.mma needs .cta_group::1 or .cta_group::2 "
                        "(ptxas 13.0: '.cta_group modifier required')", "")
    if group == "2" and ins.has("ws"):
        raise SpecError("ptx", f"line {ins.line}: {ins.text}", "tcgen05.mma.ws takes .cta_group::1 only "
                        "(ptxas 13.0: \"Illegal modifier '.cta_group::2'\")", "")
    return int(group)


def known_fields(layout: tuple, word: bits.Bits) -> dict:
    """name -> raw value of each bit field all of whose bits are known (else None)."""
    return {f.name: (f.get(word.value) if (word.known & f.mask) == f.mask else None) for f in layout}


def instr_descriptor(site: Site) -> Optional[instr_desc.InstrDescriptor]:
    if site.kind not in instr_desc.LAYOUTS or site.idesc_word is None:
        return None
    return instr_desc.decode(site.kind, site.idesc_word.value, site.arch)


def _type_name(kind: str, code: Optional[int]) -> Optional[str]:
    if code is None or kind not in dtypes.AB_TYPE_CODES:
        return None
    names = [name for name, c in dtypes.AB_TYPE_CODES[kind].items() if c == code]
    return names[0] if names else None


def _shape_from_instr_desc(site: Site) -> None:
    if site.kind not in instr_desc.LAYOUTS:
        return
    fields = known_fields(instr_desc.LAYOUTS[site.kind], site.idesc_word)
    if fields.get("m_shr4") is not None:
        site.m = fields["m_shr4"] << 4
    elif fields.get("m_shr7") is not None:
        site.m = fields["m_shr7"] << 7
    if fields.get("n_shr3") is not None:
        site.n = fields["n_shr3"] << 3
    if fields.get("dtype") is not None:
        site.d_type = {v: k for k, v in dtypes.D_TYPE_CODES.items()}.get(fields["dtype"])
    a, b = site.operands["a"], site.operands["b"]
    a.dtype, b.dtype = _type_name(site.kind, fields.get("atype")), _type_name(site.kind, fields.get("btype"))
    a.major, b.major = _major(fields.get("transpose_a")), _major(fields.get("transpose_b"))
    if a.dtype and b.dtype:
        dense_k = 2 * dtypes.elements_per_chunk(dtypes.dtype(b.dtype), site.kind)
        if "k96" in fields:
            dense_k = None if fields["k96"] is None else (mma_shape.K96 if fields["k96"] else dense_k)
        if dense_k is not None:
            site.k = 2 * dense_k if site.sparse else dense_k
            a.k, b.k = dense_k, site.k
    if site.m is not None:
        a.mn = site.m // site.cta_group
    if site.n is not None:
        b.mn = site.n // site.cta_group


# --- describing a site (the JSON document of `ptx descriptors`) ----------------------------------------------
def descriptor_fields(arch: str, word: bits.Bits) -> dict:
    """The descriptor's fields as `desc decode` gives them, None for a field with an unknown bit."""
    layout = desc_mod.SM90_FIELDS if arch == "sm90" else desc_mod.SM100_FIELDS
    decoded = desc_mod.decode(arch, word.value).fields_json()
    raw_known = known_fields(layout, word)       # the bit fields are named as fields_json names them
    return {key: decoded[key] if raw_known.get(key) is not None else None for key in decoded}


class Budget:
    """How many read-map elements may still be computed."""

    def __init__(self, elements: int = MAX_READ_ELEMENTS):
        self.left = elements

    def take(self, count: int) -> bool:
        if count > self.left:
            return False
        self.left -= count
        return True


def make_operand(site: Site, op: Operand) -> readmap.Operand:
    """spec's operand read (SpecError when the descriptor or the request cannot be read)."""
    desc = desc_mod.decode(site.arch, op.word.value)
    kind = site.kind if site.family == "tcgen05" else None
    return readmap.make_operand(desc, op.dtype, op.major, op.mn, op.k, kind)


def missing_read_map(site: Site, op: Operand) -> Optional[str]:
    """Why the operand's read map cannot be computed, or None."""
    if op.source != "descriptor":
        return f"operand {op.role.upper()} is read from {'tensor memory' if op.source == 'tmem' else 'registers'}"
    if not op.word.is_known:
        return "the descriptor has unknown bits" + _work_bound_note(site)
    for name in ("dtype", "major", "mn", "k"):
        if getattr(op, name) is None:
            source = " (instruction descriptor)" if site.family == "tcgen05" else ""
            return f"the operand's {name} is unknown{source}{_work_bound_note(site)}"
    if op.dtype not in dtypes.DTYPES:
        return f"{op.dtype} operands are not modelled"
    return None


def _work_bound_note(site: Site) -> str:
    if site.work_bound_line is None:
        return ""
    return (f" (the evaluator's work bound for this function was reached at line {site.work_bound_line}: "
            "from there on, nothing is carried over branches and loop exits)")


def violation_of(error: SpecError) -> dict:
    """A SpecError raised on what the PTX feeds an MMA (its descriptors, its instruction descriptor, the
    shape they give) as the violation of the rule it names: those are the kernel's run-time values, which
    break that rule, not malformed input to this command. Never dropped: a value spec cannot read is no
    reason to report "no violation"."""
    rule = CATALOGUE.get(error.rule_id)
    return {"rule": error.rule_id or "ptx", "source": rule.source if rule else "", "message": str(error)}


def _operand_rule_filter(site: Site, op: Operand):
    """The operand rules that do not apply: the instruction-K rule to a sparse B (2x the dense K)."""
    skip = set()
    if site.sparse and op.role == "b":
        skip.add(readmap.INSTRUCTION_K_RULE.id)
    return lambda v: v.rule.id not in skip


def _operand_kind(site: Site, op: Operand) -> Optional[str]:
    """The tcgen05 kind, or on sm90 the kind spec reads the type with (its default)."""
    if site.family == "tcgen05":
        return site.kind
    return dtypes.default_kind(dtypes.DTYPES[op.dtype]) if op.dtype in dtypes.DTYPES else None


def operand_document(site: Site, op: Operand, budget: Budget, with_addresses: bool = True) -> dict:
    document = {"source": op.source, "operand": op.text, "value": None, "known": False, "fields": None,
                "dtype": op.dtype, "kind": _operand_kind(site, op), "major": op.major, "mn": op.mn, "k": op.k,
                "addresses": None,
                "no_addresses": None, "violations": []}
    if op.source != "descriptor":
        document["no_addresses"] = missing_read_map(site, op)
        return document
    document.update(value=op.word.hex(), known=op.word.is_known, fields=descriptor_fields(site.arch, op.word))
    missing = missing_read_map(site, op)
    if op.word.is_known:
        desc = desc_mod.decode(site.arch, op.word.value)
        document["violations"] = [v.as_json() for v in desc_mod.violations(desc)]
    if missing is None:
        try:
            operand = make_operand(site, op)
        except SpecError as error:
            missing = str(error)
            document["violations"].append(violation_of(error))
        else:
            keep = _operand_rule_filter(site, op)
            document["violations"] = [v.as_json() for v in readmap.violations(operand) if keep(v)]
            if with_addresses and budget.take(operand.mn * operand.k):
                document["addresses"] = readmap.read_addresses(operand)
            elif with_addresses:
                missing = f"more than {MAX_READ_ELEMENTS} read-map elements in this output"
    document["no_addresses"] = missing
    return document


def instr_desc_document(site: Site) -> Optional[dict]:
    if site.family != "tcgen05":
        return None
    word = site.idesc_word
    document = {"operand": site.idesc_text, "value": word.hex(), "known": word.is_known, "fields": None,
                "violations": []}
    if site.kind not in instr_desc.LAYOUTS:
        return document
    document["fields"] = known_fields(instr_desc.LAYOUTS[site.kind], word)
    if word.is_known:
        document["violations"] = [v.as_json() for v in instr_desc.violations(instr_descriptor(site))]
    return document


def shape_violations(site: Site) -> list:
    """Table 39's shapes (dense, no .ws) for a fully known tcgen05 instruction descriptor."""
    if site.family != "tcgen05" or site.sparse or site.ws or not site.idesc_word.is_known:
        return []
    idesc, b = instr_descriptor(site), site.operands["b"]
    if idesc is None or b.dtype is None:
        return []
    try:
        shape = mma_shape.of_instr_desc(idesc, site.cta_group, b.dtype)
    except SpecError as error:
        return [violation_of(error)]
    return [v.as_json() for v in check_all(mma_shape.SUBJECT, shape)]


def with_every_iteration(site: Site, found, sets: Optional[dict] = None) -> Site:
    """The site with an operand the first-iteration evaluation left partly unknown replaced by its value,
    where the executor saw one value only in every visit (iterations.SiteIterations; None: not run), or
    where the any-launch sets hold one value only (valuesets; sets: register -> frozenset | Top)."""
    if found is None and sets:
        found = _single_values(sets)
    if found is None:
        return site
    operands = {role: dataclasses.replace(op) for role, op in site.operands.items()}   # (copies: the shape is
    site = dataclasses.replace(site, operands=operands)                               # read into them below)
    for role, op in operands.items():
        values = found.operands.get(op.text)
        if op.word is not None and not op.word.is_known and values is not None and values.known \
                and len(values.distinct) == 1:
            op.word = bits.const(values.distinct[0], 64)
    values = found.operands.get(site.idesc_text or "")
    if site.idesc_word is not None and not site.idesc_word.is_known and values is not None and values.known \
            and len(values.distinct) == 1:
        site = dataclasses.replace(site, idesc_word=bits.const(values.distinct[0], 32))
        _shape_from_instr_desc(site)
    return site


def at_visit(site: Site, values: dict) -> Site:
    """The site as one executor visit fed it: each descriptor (and the instruction descriptor) is the value
    the visit recorded (executor.Visit.values), or unknown where it recorded none; the shape read again
    from the instruction descriptor."""
    operands = {role: dataclasses.replace(op) for role, op in site.operands.items()}
    site = dataclasses.replace(site, operands=operands)
    for op in operands.values():
        if op.word is not None:
            value = values.get(op.text)
            op.word = bits.const(value, 64) if isinstance(value, int) else bits.unknown(64)
    if site.idesc_word is not None:
        value = values.get(site.idesc_text or "")
        site.idesc_word = bits.const(value, 32) if isinstance(value, int) else site.idesc_word
        _shape_from_instr_desc(site)
    return site


@dataclasses.dataclass
class _Values:
    distinct: list
    known: bool = True


@dataclasses.dataclass
class _Found:
    operands: dict


def _single_values(sets: dict) -> _Found:
    """The any-launch sets as the executor's summary reads them (known sets only)."""
    return _Found({name: _Values(sorted(value)) for name, value in sets.items() if isinstance(value, frozenset)})


def _all_known(site: Site, found) -> bool:
    return all(found.operands.get(op.text) is not None and found.operands[op.text].known
               for op in site.operands.values() if op.source == "descriptor")


def undecided_words(found, register: str) -> set:
    """The values the run fed the register only on paths it could not decide (executor.Visit.maybe: a side
    of a branch on an unknown value, or under an unknown guard): values a launch may never feed."""
    every, decided = set(), set()
    for visit in (found.visits if found is not None else []):
        word = visit.values.get(register)
        every.add(word)
        if not visit.maybe:
            decided.add(word)
    return every - decided


def _undecided_words(site: Site, found, registers: dict) -> dict:
    """{operand ("a", "b", "idesc"; "shape" as idesc): undecided_words of its register}."""
    out = {role: undecided_words(found, text) for role, text in registers.items()}
    if "idesc" in out:
        out["shape"] = out["idesc"]
    return out


def _word_of(site: Site, violation: dict) -> Optional[int]:
    """The value a violation is about: its descriptor (a later iteration's), else the operand's word."""
    if violation.get("descriptor"):
        return int(violation["descriptor"], 16)
    word = site.idesc_word if violation["operand"] in ("idesc", "shape") else \
        site.operands[violation["operand"]].word if violation["operand"] in site.operands else None
    return word.value if word is not None and word.is_known else None


def iteration_violations(site: Site, found) -> list:
    """The rules any descriptor value of any visit breaks (each distinct value decoded once)."""
    out = []
    for role, op in site.operands.items():
        values = found.operands.get(op.text) if found is not None and op.source == "descriptor" else None
        for word in (values.distinct if values is not None else []):
            for v in desc_mod.violations(desc_mod.decode(site.arch, word)):
                entry = dict(v.as_json(), operand=role, descriptor=f"{word:#018x}")
                if entry not in out:
                    out.append(entry)
    return out


def site_document(site: Site, budget: Budget, with_addresses: bool = True, found=None, sets=None,
                  whole: bool = False) -> dict:
    """The site's JSON (`ptx descriptors`). found: the run's iterations.SiteIterations; sets: the any-launch
    sets; whole: the run fed every value the CTA feeds (executor.Run.incomplete is None). An operand is
    `known` when every value it is fed is known: the any-launch sets know it, or the run saw it known and
    is whole, or outside any loop the first-iteration evaluation knows it (inside one, that is the first
    iteration only)."""
    from solver.kernel import iterations
    site = with_every_iteration(site, found if found is not None and _all_known(site, found) else None, sets) \
        if sets else with_every_iteration(site, found)
    loop = site.loop
    operands = {role: operand_document(site, op, budget, with_addresses) for role, op in site.operands.items()}
    registers = {role: op.text for role, op in site.operands.items() if op.source == "descriptor"}
    if site.idesc_text:
        registers["idesc"] = site.idesc_text
    every = iterations.site_document(found, registers, sets,
                                     start_of=lambda word: desc_mod.decode(site.arch, word).start_address)
    for role, doc in operands.items():
        seen = (every or {}).get("operands", {}).get(role)
        any_launch = ((every or {}).get("any_launch") or {}).get(role)
        if any_launch is not None and any_launch["known"]:
            doc["known"] = True
        elif seen is not None and seen["known"] and seen["count"]:
            doc["known"] = whole
        else:
            doc["known"] = doc["known"] and loop is None
    idesc = instr_desc_document(site)
    shape = shape_violations(site)
    violations = [dict(v, operand=role) for role, doc in operands.items() for v in doc["violations"]]
    violations += [dict(v, operand="idesc") for v in (idesc["violations"] if idesc else [])]
    violations += [dict(v, operand="shape") for v in shape]
    violations += [v for v in iteration_violations(site, found)
                   if not any(v["rule"] == w["rule"] and v["operand"] == w["operand"] for w in violations)]
    # A value the run fed only on a side of a branch on an unknown value, or under an unknown guard
    # (executor.Visit.maybe), may be one no launch feeds: the rules it breaks are possibilities.
    undecided = _undecided_words(site, found, registers)
    possible = [v for v in violations if _word_of(site, v) in undecided.get(v["operand"], ())]
    violations = [v for v in violations if v not in possible]
    # The any-launch sets may hold values no launch reaches (they take inputs as independent and as any
    # value of their width: a stage k % 6 is -5..5 there). A rule such a value breaks is a possibility to
    # look at, not a finding: it is listed apart and does not change the exit status.
    possible += [v for v in iteration_violations(site, _single_values(sets or {}))
                 if not any(v["rule"] == w["rule"] and v["operand"] == w["operand"] for w in violations + possible)]
    return {"iterations": every, "function": site.function, "line": site.line, "instruction": site.text, "family": site.family,
            "arch": site.arch, "arch_from": site.arch_from, "guard": site.guard,
            "first_iteration": loop is not None,
            "loop": {"header_line": loop.header_line, "back_branch_line": loop.branch_line} if loop else None,
            "kind": site.kind, "cta_group": site.cta_group if site.family == "tcgen05" else None,
            "sparse": site.sparse, "ws": site.ws, "block_scale": site.block_scale,
            "shape": {"m": site.m, "n": site.n, "k": site.k},
            "dtypes": {"a": site.operands["a"].dtype, "b": site.operands["b"].dtype, "d": site.d_type},
            "instr_desc": idesc, "operands": operands, "violations": violations, "possible_violations": possible}
