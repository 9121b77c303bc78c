"""Judging Triton (Gluon) against spec: the answers of solver/fuzz/adapters/triton_gluon.py.

Pure Python: nothing here imports triton. The adapter compiles one Gluon kernel per case (its two
operands in shared memory with NVMMASharedLayout, one warpgroup_mma on sm90 or tcgen05_mma on sm100)
and answers with Triton's own element -> offset map of each tile (`to_linear_layout`, compact: the
offset bases of its LinearLayout) and the MMAs of the emitted PTX with their descriptor words
(`mma_descriptors`, evaluated with the shared-memory window's base at 0). This module says where the two
sides part:

  (a) "misread": Triton's descriptor does not read Triton's own layout: for each MMA (k-step i reads
      K elements [i*K_inst, (i+1)*K_inst)) and each operand, spec.mma.readmap's address of element
      (mn, k) differs from the tile's address base + bytes(offset(mn, k)). The tile's base is the
      first MMA's start address (Triton's layouts put element (0, 0) at offset 0): the start of
      k-step 0 is taken as right, every other field and k-step is checked.
  (b) "accepts_illegal": Triton compiled a case whose emitted operand breaks a spec rule
      (readmap.violations: Table 54, the MN-major dtype rules, instruction K, wgmma N; on sm100 also
      the tcgen05 shape of spec.mma.shape).
  (c) "refuses_legal": Triton refused a case whose operand spec calls legal (same rules, on the
      operand the case asks for) and whose tile is a whole number of swizzle atoms. Cases outside
      that (element_bitwidth different from the dtype's, or no layout came back) are "not judged"
      when refused. Legal means: the operand's rules hold, and the descriptor spec builds from
      Triton's layout (`spec_descriptor_for`: spec.cases.desc_case's field table) reads it.
  "crash": Triton aborted the process (LLVM ERROR, failed C++ assertion) instead of raising; recorded
      apart (the adapter's campaign restarts the compiler process).

Case (the adapter's `triton-nvmma` case, Triton's own parameters):
    {"arch": "sm90" | "sm100", "dtype": "f16" | "bf16" | "e4m3" | "e5m2" | "f32" | "s8",
     "operand": "A" | "B", "shape": [rows, cols] (A is [M, K], B is [K, N], as Gluon allocates them),
     "swizzle_byte_width": 0 | 32 | 64 | 128, "element_bitwidth": 8 | 16 | 32, "transposed": bool}
The other operand gets NVMMASharedLayout.get_default_for, K-major where the dtype cannot be MN-major
(8- and 32-bit types), so that the kernel is legal but for the case's operand.
"""
from __future__ import annotations

import json
from typing import Optional

from spec.mma import descriptor as spec_descriptor
from spec.mma import instr_desc, readmap
from spec.mma import shape as mma_shape
from spec.rule import SpecError, check_all

ARCHES = ("sm90", "sm100")
# case dtype -> (bits, spec dtype, tcgen05 kind)
DTYPES = {"f16": (16, "f16", "f16"), "bf16": (16, "bf16", "f16"), "e4m3": (8, "e4m3", "f8f6f4"),
          "e5m2": (8, "e5m2", "f8f6f4"), "f32": (32, "f32", "tf32"), "s8": (8, "s8", "i8")}
SWIZZLES = {0: "none", 32: "32B", 64: "64B", 128: "128B"}
M_OF_ARCH = {"sm90": 64, "sm100": 128}      # the kernel's M: one warpgroup's wgmma; tcgen05 M = 128


def instruction_k(dtype: str) -> int:
    """K of one MMA: 32 bytes of K per row."""
    return 256 // DTYPES[dtype][0]


def check_case(case: dict) -> dict:
    """The case with defaults, or SpecError when malformed."""
    if not isinstance(case, dict):
        raise SpecError("case", case, "not an object", "triton.case")
    c = dict(case)
    for key, allowed in (("arch", ARCHES), ("dtype", tuple(DTYPES)), ("operand", ("A", "B")),
                         ("swizzle_byte_width", tuple(SWIZZLES)), ("element_bitwidth", (8, 16, 32, 64))):
        if c.get(key) not in allowed:
            raise SpecError(key, c.get(key), "expected one of " + " ".join(map(str, allowed)), "triton.case")
    c["transposed"] = bool(c.get("transposed", False))
    shape = c.get("shape")
    if not (isinstance(shape, list) and len(shape) == 2 and all(isinstance(s, int) and s > 0 for s in shape)):
        raise SpecError("shape", shape, "expected [rows, cols] of positive integers", "triton.case")
    return c


def operand_geometry(case: dict) -> tuple:
    """(mn, k, major) of the case's operand: A [M, K] is K-major untransposed; B [K, N] is MN-major
    untransposed (its contiguous dimension is N)."""
    rows, cols = case["shape"]
    if case["operand"] == "A":
        return rows, cols, "MN" if case["transposed"] else "K"
    return cols, rows, "K" if case["transposed"] else "MN"


def kernel_shapes(case: dict) -> dict:
    """{"A": [M, K], "B": [K, N]} of the case's kernel."""
    mn, k, _ = operand_geometry(case)
    m = M_OF_ARCH[case["arch"]]
    return {"A": [mn, k], "B": [k, m]} if case["operand"] == "A" else {"A": [m, k], "B": [k, mn]}


# --- Triton's layout: a LinearLayout from offsets to (row, col) ---------------------------------------
def offset_table(layout: dict, shape: list) -> dict:
    """(row, col) -> element offset, inverting the linear layout: offset o holds the XOR of the bases of
    its set bits. Offsets whose coordinate falls outside `shape` are padding (ignored)."""
    bases = layout["offset_bases"]
    table = {}
    for o in range(1 << len(bases)):
        r = c = 0
        for bit, (br, bc) in enumerate(bases):
            if o >> bit & 1:
                r ^= br
                c ^= bc
        if r < shape[0] and c < shape[1]:
            table.setdefault((r, c), o)
    return table


# --- PTX: the MMAs and their descriptors (solver.kernel, `layoutproof ptx descriptors`; shared base 0) -------
def mma_descriptors(ptx: str, smem_base: int = 0) -> list:
    """Each wgmma.mma_async / tcgen05.mma of the PTX, in order, with its operands' descriptor words
    (None where not fully known): {"instruction", "a", "b", and wgmma: "shape" [m, n, k], "trans_a",
    "trans_b"; tcgen05: "idesc", "cta_group", "kind"}, as solver.kernel evaluates them with the shared
    symbols from `smem_base`."""
    from solver.kernel import analysis

    def known(word):
        return word.value if word is not None and word.is_known else None

    mmas = []
    for site in analysis.analyse(ptx, smem_base=smem_base).sites:
        words = {role: known(op.word) if op.source == "descriptor" else None for role, op in site.operands.items()}
        if site.family == "wgmma":
            majors = {role: op.major for role, op in site.operands.items()}
            mmas.append({"instruction": "wgmma", "shape": [site.m, site.n, site.k],
                         "a": words.get("a"), "b": words.get("b"),
                         "trans_a": int(majors.get("a") == "MN"), "trans_b": int(majors.get("b") == "MN")})
        else:
            mmas.append({"instruction": "tcgen05", "cta_group": site.cta_group, "kind": site.kind,
                         "a": words.get("a"), "b": words.get("b"), "idesc": known(site.idesc_word)})
    return mmas


# --- The comparison ---------------------------------------------------------------------------------
def _spec_dtype(case: dict) -> tuple:
    bits, name, kind = DTYPES[case["dtype"]]
    return name, (kind if case["arch"] != "sm90" else None)


def _operand_of_mma(case: dict, mma: dict, which: str) -> Optional[tuple]:
    """(descriptor word, major, instruction mn, instruction k) of operand `which` of one MMA."""
    word = mma.get(which.lower())
    if not isinstance(word, int):
        return None
    if mma["instruction"] == "wgmma":
        m, n, k = mma["shape"]
        major = "MN" if mma.get(f"trans_{which.lower()}") else "K"
        return word, major, (m if which == "A" else n), k
    idesc = mma.get("idesc")
    if not isinstance(idesc, int):
        return None
    d = instr_desc.decode(_spec_dtype(case)[1], idesc)
    major = d.a_major if which == "A" else d.b_major
    return word, major, (d.m if which == "A" else d.n), instruction_k(case["dtype"])


def _rule_ids(violations) -> list:
    return sorted({v.rule.id if hasattr(v, "rule") else str(v) for v in violations})


def spec_descriptor_for(case: dict, layout: dict) -> Optional[list]:
    """The descriptors spec would give the case's operand to read Triton's `layout`, one per k-step
    (spec.cases.desc_case's table: each field is the tile's linear distance from element (0, 0) to the
    element it leads to; the start of k-step i is the linear address of element (0, i*K_inst)), as
    synthetic MMAs for `misreads`; None when a field cannot be encoded (no descriptor reads the tile)."""
    from spec.cute.swizzle import DESCRIPTOR_SWIZZLES
    bits = DTYPES[case["dtype"]][0]
    mn, k, major = operand_geometry(case)
    swizzle = SWIZZLES[case["swizzle_byte_width"]]
    sw = DESCRIPTOR_SWIZZLES[swizzle]
    shape = kernel_shapes(case)[case["operand"]]
    table = offset_table(layout, shape)
    T = 128 // bits
    atom = T * max(case["swizzle_byte_width"], 16) // 16

    def linear(m, kk):
        coord = (m, kk) if case["operand"] == "A" else (kk, m)
        held = table.get(coord)
        return None if held is None else sw(held * bits // 8)

    if major == "K":
        fields = {"sbo": (8, 0), "lbo": (0, T if swizzle == "none" else atom)}
    elif swizzle == "none":
        fields = {"sbo": (T, 0), "lbo": (0, 8)}
    else:
        fields = {"sbo": (0, 8), "lbo": (atom, 0)}
    origin = linear(0, 0)
    values = {}
    for name, (m, kk) in fields.items():
        there = linear(m, kk) if m < mn and kk < k else None
        values[name] = 0 if there is None else there - origin
    kinst = instruction_k(case["dtype"])
    mmas = []
    for i in range(k // kinst):
        start = linear(0, i * kinst)
        try:
            word = spec_descriptor.encode(case["arch"], start, values["lbo"], values["sbo"], swizzle).raw
        except SpecError:
            return None
        entry = {"instruction": "wgmma", "shape": [mn, mn, kinst], "a": None, "b": None,
                 "trans_a": int(major == "MN"), "trans_b": int(major == "MN")}
        entry[case["operand"].lower()] = word
        mmas.append(entry)
    return mmas


def spec_verdict(case: dict, layout: Optional[dict] = None) -> dict:
    """What spec says of the case's operand: {"legal": True | False | None, "broken": [rule ids],
    "why": ...}. The operand's rules (dtype, major, swizzle, K, N, the tcgen05 shape), and, given Triton's
    `layout` of the tile, whether a descriptor spec builds from it reads it (rule desc.tile.reads).
    None: not judged (element_bitwidth is not the dtype's; or no layout to judge)."""
    case = check_case(case)
    bits, dname, _ = DTYPES[case["dtype"]]
    mn, k, major = operand_geometry(case)
    swizzle = SWIZZLES[case["swizzle_byte_width"]]
    if case["element_bitwidth"] != bits:
        return {"legal": None, "broken": [], "why": f"element_bitwidth {case['element_bitwidth']} is not "
                f"{case['dtype']}'s {bits}: a layout for another type"}
    kinst = instruction_k(case["dtype"])
    if k % kinst:
        return {"legal": False, "broken": ["operand.instruction_k"], "why": f"K = {k} is no multiple of {kinst}"}
    arch = case["arch"]
    desc = spec_descriptor.encode(arch, 0, 0, 0, swizzle)
    dname_, kind = _spec_dtype(case)
    broken = []
    mma_mn = mn
    if case["operand"] == "A":
        # A's extent is the instruction's M; the rules below are written for B (N): check A's dtype rules only
        mma_mn = 64 if arch == "sm90" else 128
    op = readmap.make_operand(desc, dname, major, mma_mn if case["operand"] == "B" else 8, kinst, kind)
    broken += [v for v in readmap.violations(op)]
    if arch != "sm90":
        n = mn if case["operand"] == "B" else M_OF_ARCH[arch]
        other_b_major = "K" if bits != 16 else "MN"          # the other operand (see the docstring)
        b_major = major if case["operand"] == "B" else other_b_major
        sh = mma_shape.make_shape(arch, kind, 1, M_OF_ARCH[arch] if case["operand"] == "B" else mn, n, kinst,
                                  dname, b_major)
        broken += check_all(mma_shape.SUBJECT, sh)
    elif case["operand"] == "A" and mn != 64:
        return {"legal": False, "broken": ["triton.kernel.m"], "why": "wgmma M is 64 (one warpgroup)"}
    ids = _rule_ids(broken)
    if not ids:
        if layout is None:
            return {"legal": None, "broken": [], "why": "no layout of the tile to read"}
        mmas = spec_descriptor_for(case, layout)
        if mmas is None:
            return {"legal": False, "broken": ["desc.field.encoding"],
                    "why": "a distance of the tile is no descriptor field"}
        found, _ = misreads(case, {"descriptor": {"mmas": mmas}, "layout": {case["operand"]: layout}},
                            operands=(case["operand"],))
        if found:
            return {"legal": False, "broken": ["desc.tile.reads"],
                    "why": f"no descriptor reads Triton's tile: {json.dumps(found[0].get('witness') or found[0])}"}
    return {"legal": not ids, "broken": ids, "why": "; ".join(str(getattr(v, "message", v)) for v in broken)[:300]}


def misreads(case: dict, answer: dict, limit: int = 1, operands=("A", "B")) -> tuple:
    """((a) findings, elements compared): every MMA's operands against Triton's layouts."""
    shapes = kernel_shapes(case)
    mmas = (answer.get("descriptor") or {}).get("mmas") or []
    layouts = answer.get("layout") or {}
    bits, dname, _ = DTYPES[case["dtype"]]
    _, kind = _spec_dtype(case)
    findings, compared = [], 0
    for which in operands:
        layout = layouts.get(which)
        if not layout:
            continue
        table = offset_table(layout, shapes[which])
        base = None
        for i, mma in enumerate(mmas):
            got = _operand_of_mma(case, mma, which)
            if got is None:
                findings.append({"finding": "misread", "operand": which, "mma": i,
                                 "detail": "descriptor is not a constant of the shared base"})
                break
            word, major, extent, kinst = got
            arch = case["arch"]
            desc = spec_descriptor.decode(arch, word)
            if base is None:
                base = desc.start_address - table[(0, 0)] * bits // 8
                if base % layout.get("alignment", 16):
                    findings.append({"finding": "misread", "operand": which, "mma": i,
                                     "detail": f"tile base {base:#x} not aligned to the layout's "
                                               f"{layout.get('alignment')} bytes"})
            try:
                op = readmap.make_operand(desc, dname, major, extent, kinst, kind)
            except SpecError as error:
                findings.append({"finding": "misread", "operand": which, "mma": i, "detail": str(error)})
                break
            reads = readmap.read_addresses(op)
            bad = None
            for mn in range(extent):
                for kk in range(kinst):
                    k = i * kinst + kk
                    coord = (mn, k) if which == "A" else (k, mn)
                    held = table.get(coord)
                    compared += 1
                    if held is None or base + held * bits // 8 != reads[mn][kk]:
                        bad = bad or {"mn": mn, "k": k, "read_from": reads[mn][kk],
                                      "held_at": None if held is None else base + held * bits // 8}
            if bad:
                findings.append({"finding": "misread", "operand": which, "mma": i, "descriptor": desc.hex,
                                 "major": major, "witness": bad})
                if len(findings) >= limit:
                    return findings, compared
    return findings, compared


def emitted_violations(case: dict, answer: dict) -> list:
    """Spec rules broken by the operand as Triton emitted it (first MMA)."""
    mmas = (answer.get("descriptor") or {}).get("mmas") or []
    if not mmas:
        return []
    dname, kind = _spec_dtype(case)
    mma = mmas[0]
    broken = []
    for which in ("A", "B"):
        got = _operand_of_mma(case, mma, which)
        if got is None:
            continue
        word, major, extent, kinst = got
        desc = spec_descriptor.decode(case["arch"], word)
        try:
            op = readmap.make_operand(desc, dname, major, extent if which == "B" else 8, kinst, kind)
        except SpecError as error:
            broken.append(f"{which}:{error.rule_id if hasattr(error, 'rule_id') else error}")
            continue
        broken += [f"{which}:{r}" for r in _rule_ids(readmap.violations(op))]
    if mma["instruction"] == "tcgen05" and isinstance(mma.get("idesc"), int):
        d = instr_desc.decode(kind, mma["idesc"])
        sh = mma_shape.of_instr_desc(d, mma.get("cta_group") or 1, dname)
        broken += [f"mma:{r}" for r in _rule_ids(check_all(mma_shape.SUBJECT, sh))]
    return broken


def compare(case: dict, answer: dict) -> dict:
    """{"outcome": "agree" | "disagree" | "not_judged", "findings": [...], "elements": compared,
    "spec": spec_verdict}."""
    case = check_case(case)
    spec = spec_verdict(case, (answer.get("layout") or {}).get(case["operand"]))
    if answer.get("crash"):
        # the compiler aborted the process (an LLVM ERROR or a failed C++ assertion) instead of raising:
        # no layout came back, so spec cannot say whether the tile was legal
        return {"outcome": "agree" if spec["legal"] is False else "not_judged", "elements": 0, "spec": spec,
                "findings": [{"finding": "crash", "detail": answer.get("detail", "")[:300]}]}
    if answer.get("verdict") == "refuse":
        if spec["legal"] is True:
            return {"outcome": "disagree", "elements": 0, "spec": spec,
                    "findings": [{"finding": "refuses_legal", "detail": answer.get("detail", "")[:300]}]}
        return {"outcome": "agree" if spec["legal"] is False else "not_judged", "elements": 0, "spec": spec,
                "findings": []}
    if answer.get("verdict") != "accept":
        return {"outcome": "not_judged", "elements": 0, "spec": spec, "findings": [],
                "detail": answer.get("detail")}
    findings, compared = misreads(case, answer)
    broken = emitted_violations(case, answer)
    if broken:
        findings.append({"finding": "accepts_illegal", "broken": broken})
    return {"outcome": "disagree" if findings else "agree", "elements": compared, "spec": spec,
            "findings": findings}
