"""The CuTe DSL's answers (solver/fuzz/adapters/cute_dsl.py) judged by spec: pure Python, no DSL.

For one cute_dsl case and the DSL's answer, `compare` returns a Finding:

  * "descriptor-misreads-layout" (a): the DSL accepted, and for some k-block the descriptor it built, read
    as spec.mma.readmap reads it, fetches some element (mn, k) from elsewhere than the DSL's own layout
    holds it. The DSL's layout is the partitioned layout of its answer: element (mn, k) of k-block kb
    sits at element offset L(((mn, k), 0, kb, 0)), byte address swizzle(smem_base + offset * bits / 8)
    (the DSL moves the layout's swizzle onto the smem pointer, which swizzles byte addresses).
  * "accepts-broken-rule" (b): the DSL accepted and the operand its descriptors describe breaks one of
    spec's rules (spec.mma.readmap.violations: Table 54, MN-major dtypes, descriptor bit rules, ...).
  * "refuses-legal" (c): the DSL refused a configuration spec calls legal: the atom's swizzle and major
    break no operand rule for the dtype, the tile is a whole number of atoms, and the MMA shape is in
    spec's tables (spec.mma.shape).
  * "agree": none of these.

A refusal spec does not call legal (a rule broken, a tile that is no whole number of atoms, an MMA shape
outside the tables) is "agree" with the reason in `detail`.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Optional

from solver import provenance
from solver.fuzz import compiler_campaign
from solver.fuzz.adapters import cute_dsl as adapter
from solver.fuzz.compiler_campaign import COUNT, Checked, ListOf, MapOf, OneOf, fields
from spec.cute.layout import flatten, product
from spec.cute.notation import parse_layout
from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes, readmap
from spec.mma import shape as mma_shape
from spec.rule import SpecError, check_all

# The DSL's pointer swizzles (S<B,M,S>) as descriptor swizzle names (the DSL docstring of
# make_umma_smem_desc / make_gmma_smem_desc lists the same five).
SWIZZLE_NAMES = {"S<0,4,3>": "none", "S<1,4,3>": "32B", "S<2,4,3>": "64B", "S<3,4,3>": "128B",
                 "S<2,5,2>": "128B_atom32B"}
# SmemLayoutAtomKind -> (major, descriptor swizzle name, contiguous bytes of the atom)
ATOM_KINDS = {"K_INTER": ("K", "none", 16), "K_SW32": ("K", "32B", 32), "K_SW64": ("K", "64B", 64),
              "K_SW128": ("K", "128B", 128), "MN_INTER": ("MN", "none", 16), "MN_SW32": ("MN", "32B", 32),
              "MN_SW64": ("MN", "64B", 64), "MN_SW128": ("MN", "128B", 128),
              "MN_SW128_32B": ("MN", "128B_atom32B", 128)}
KINDS = ("descriptor-misreads-layout", "accepts-broken-rule", "refuses-legal", "agree")


@dataclass
class Finding:
    kind: str                      # one of KINDS
    detail: str = ""
    rules: list = field(default_factory=list)      # spec rule ids broken (accepted cases)
    witness: Optional[dict] = None  # the first misread element
    elements: int = 0              # elements compared (all k-blocks)


@lru_cache(maxsize=4096)
def _partitioned(swizzle: str, text: str):
    m = re.fullmatch(r"S<(\d+),(\d+),(\d+)>", swizzle.replace(" ", ""))
    if not m:
        raise SpecError("swizzle", swizzle, "not an S<B,M,S> swizzle", "cute.notation")
    return parse_layout(f"Sw<{m[1]},{m[2]},{m[3]}> o {text}")


def operand_extent(answer: dict) -> tuple:
    """(mn, k, k-blocks) of the partitioned layout ((MN, K), restMN, restK, stages)."""
    layout = _partitioned(answer["swizzle"], answer["partitioned"]).layout
    shape = layout.shape
    return product(shape[0][0]), product(shape[0][1]), product(shape[2])


def _mode_offsets(shape, stride, count: int) -> list:
    """A mode's offsets at indices 0 .. count-1 (colexicographic)."""
    shapes, strides = flatten(shape), flatten(stride)
    out = []
    for index in range(count):
        offset = 0
        for s, d in zip(shapes, strides):
            offset += (index % s) * d
            index //= s
        out.append(offset)
    return out


def tile_addresses(case: dict, answer: dict, kb: int) -> list:
    """addresses[mn][k]: the byte address where the DSL's layout holds element (mn, k) of k-block kb."""
    composed = _partitioned(answer["swizzle"], answer["partitioned"])
    layout, swizzle = composed.layout, composed.swizzle
    mn, k, _ = operand_extent(answer)
    shape, stride = layout.shape, layout.stride
    along_mn = _mode_offsets(shape[0][0], stride[0][0], mn)
    along_k = _mode_offsets(shape[0][1], stride[0][1], k)
    block = _mode_offsets(shape[2], stride[2], kb + 1)[kb]
    bits = dtypes.dtype(case["dtype"]).bits
    base = case.get("smem_base", 0)
    return [[swizzle(base + (row + col + block) * bits // 8) for col in along_k] for row in along_mn]


def spec_operand(case: dict, answer: dict, word: int) -> readmap.Operand:
    desc = spec_descriptor.decode(case["arch"], word)
    mn, k, _ = operand_extent(answer)
    return readmap.make_operand(desc, case["dtype"], case["major"], mn, k)


def first_misread(case: dict, answer: dict) -> tuple:
    """(witness or None, elements compared) over every k-block's descriptor."""
    compared = 0
    for kb, text in enumerate(answer.get("descriptors", [])):
        op = spec_operand(case, answer, int(text, 16))
        reads = readmap.read_addresses(op)
        held = tile_addresses(case, answer, kb)
        compared += op.mn * op.k
        for mn, (r_row, h_row) in enumerate(zip(reads, held)):
            if r_row != h_row:
                k = next(i for i, (x, y) in enumerate(zip(r_row, h_row)) if x != y)
                return ({"k_block": kb, "descriptor": text, "element": {"mn": mn, "k": k},
                         "read_from": r_row[k], "held_at": h_row[k]}, compared)
    return None, compared


def broken_rules(case: dict, answer: dict) -> list:
    """The rule ids the accepted case's operands break (every k-block's descriptor), in order, once."""
    seen = []
    for text in answer.get("descriptors", []):
        for v in readmap.violations(spec_operand(case, answer, int(text, 16))):
            if v.rule.id not in seen:
                seen.append(v.rule.id)
    return seen


def _mma_mn(case: dict) -> tuple:
    """(m, n, the operand's extent) of the case's MMA: the tiler's M and N; the operand's per-CTA extent
    (M / cta_group for A, N / cta_group for B with .cta_group::2)."""
    m, n, _ = case["mma_tiler"]
    group = case.get("cta_group", 1)
    extent = (m if case.get("operand", "B") == "A" else n) // group
    return m, n, extent


def legality(case: dict, atom: Optional[str]) -> Optional[str]:
    """None when spec calls the configuration legal with this atom; else why not (one line)."""
    arch, d = case["arch"], dtypes.dtype(case["dtype"])
    major = case["major"]
    if atom is not None:
        atom_major, swizzle, width = ATOM_KINDS[atom]
        if atom_major != major:
            return f"atom {atom} is {atom_major}-major, the operand {major}-major"
    else:
        swizzle, width = "none", 16
    kind = dtypes.default_kind(d)
    m, n, extent = _mma_mn(case)
    k_tile = case["mma_tiler"][2]
    instr_k = dtypes.instruction_k_values(d, kind, arch)[0]
    code_word = spec_descriptor.encode(arch, 0, 16, 16, swizzle if arch != "sm90" or swizzle != "128B_atom32B" else "none")
    if arch == "sm90" and swizzle == "128B_atom32B":
        return "sm90 has no 128B_atom32B swizzle"
    # on sm90 the operand rules' MN extent is wgmma's N (rule operand.sm90.n_extent reads it so)
    rule_mn = n if arch == "sm90" else extent
    op = readmap.make_operand(code_word, d.name, major, max(8, rule_mn - rule_mn % 8), instr_k)
    broken = [v.rule.id for v in check_all("operand", op)]
    if broken:
        return "spec rules: " + " ".join(broken)
    atom_elems = width * 8 // d.bits
    mn_atom, k_atom = (atom_elems, 8) if major == "MN" else (8, atom_elems)
    if extent % mn_atom or k_tile % k_atom or k_tile % instr_k or extent % 8:
        return f"tile {extent}x{k_tile} is no whole number of {mn_atom}x{k_atom} atoms / instruction K {instr_k}"
    if arch == "sm90":
        if m % 64 or n % 8 or n > 256:
            return f"the wgmma tile {m}x{n} is no m64nN"
        return None
    shp = mma_shape.make_shape(arch, kind, case.get("cta_group", 1), m, n, instr_k, d.name,
                               major if case.get("operand", "B") == "B" else "K")
    broken = [v.rule.id for v in check_all(mma_shape.SUBJECT, shp)]
    return ("spec rules: " + " ".join(broken)) if broken else None


def heuristic_atom(case: dict) -> str:
    """The atom the DSL's helper picks (its documented heuristic: the widest swizzle whose row divides
    the major extent; sm100 32-bit MN-major takes MN_SW128_32B), for judging refusals without the DSL."""
    d = dtypes.dtype(case["dtype"])
    _, _, extent = _mma_mn(case)
    size = (extent if case["major"] == "MN" else case["mma_tiler"][2]) * d.bits
    prefix = case["major"] + "_"
    if case["major"] == "MN" and d.bits == 32 and case["arch"] == "sm100" and size % 1024 == 0:
        return "MN_SW128_32B"
    for bits, name in ((1024, "SW128"), (512, "SW64"), (256, "SW32")):
        if size % bits == 0:
            return prefix + name
    return prefix + "INTER"


def compare(case: dict, answer: dict) -> Finding:
    if answer.get("verdict") == "accept":
        witness, compared = first_misread(case, answer)
        rules = broken_rules(case, answer)
        if witness is not None:
            return Finding("descriptor-misreads-layout", f"k-block {witness['k_block']}: element "
                           f"{witness['element']} read from {witness['read_from']:#x}, held at "
                           f"{witness['held_at']:#x}", rules, witness, compared)
        if rules:
            return Finding("accepts-broken-rule", "spec rules broken: " + " ".join(rules), rules, None, compared)
        return Finding("agree", "descriptors read the DSL's layout; no rule broken", [], None, compared)
    if answer.get("verdict") == "refuse":
        atom = answer.get("atom") or case.get("atom") or heuristic_atom(case)
        why = legality(case, atom)
        if why is None:
            return Finding("refuses-legal", f"refused ({answer.get('detail', '')}); spec: legal with {atom}")
        return Finding("agree", f"refused; spec: {why}")
    return Finding("agree", f"no verdict: {answer.get('detail', '')}")


# --- the campaign: cases, running the adapter (solver/fuzz/compiler_campaign.py) --------------------------

DTYPE_NAMES = ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8")
SM90_ATOMS = tuple(k for k in ATOM_KINDS if k != "MN_SW128_32B")
CAMPAIGN_ARCHES = ("sm90", "sm100")
PYTHON = "/work/venvs/cutedsl/bin/python"      # the venv that has nvidia-cutlass-dsl (the --python default)


def generate(arch: str, count: int, seed: int) -> list:
    """`count` distinct cute_dsl cases on `arch` (fewer when they run out), sampled over the DSL's
    parameters (atom: the helper's own choice in a quarter of the cases, every SmemLayoutAtomKind otherwise,
    of either major)."""
    import random
    rng = random.Random(f"{arch}:{seed}")
    atoms = SM90_ATOMS if arch == "sm90" else tuple(ATOM_KINDS)

    def draws():
        while True:
            d = rng.choice(DTYPE_NAMES)
            major = rng.choice(("K", "MN"))
            atom = None if rng.random() < 0.25 else rng.choice(
                [a for a in atoms if ATOM_KINDS[a][0] == major] if rng.random() < 0.8 else atoms)
            bits = dtypes.dtype(d).bits
            k_tile = rng.choice((1, 2, 4, 8)) * 256 // bits * rng.choice((1, 1, 2)) // 2 or 8
            if arch == "sm90":
                group, m = 1, rng.choice((64, 64, 128))
                n = rng.choice((8, 16, 24, 32, 40, 48, 64, 96, 128, 192, 256))
            else:
                group = rng.choice((1, 1, 2))
                m = rng.choice((64, 128) if group == 1 else (128, 256))
                n = rng.choice((16, 32, 48, 64, 96, 128, 192, 256))
            base = rng.choice((0, 1024 * rng.randrange(64), 1024 * rng.randrange(64),
                               128 * rng.randrange(512), 16 * rng.randrange(4096)))
            yield {"arch": arch, "operand": rng.choice(("A", "B")), "dtype": d, "major": major, "atom": atom,
                   "mma_tiler": [m, n, k_tile], "cta_group": group, "smem_base": base,
                   "stages": rng.choice((1, 1, 2))}
    return compiler_campaign.distinct(draws(), count)


def fuzz_cases(arch: str, count: int, seed: int = 0) -> list:
    """`count` cases from `layoutproof fuzz --target cute-dsl` on `arch` (solver/fuzz/cute_dsl.py: Z3-anchored
    and sampled), taken in turn from --valid and each rule broken alone (those with cases there)."""
    from solver.fuzz import engine
    rule_ids = engine.target_module("cute-dsl").RULE_IDS        # by name: the target imports this judge
    asks = [frozenset()] + [frozenset({r}) for r in rule_ids]
    pools = [[rec["case"] for rec in engine.generate("cute-dsl", arch, asked, count, seed)] for asked in asks]
    seen, out = set(), []
    for row in range(count):
        for pool in pools:
            if row < len(pool) and json_key(pool[row]) not in seen and len(out) < count:
                seen.add(json_key(pool[row]))
                out.append(pool[row])
    return out


json_key = compiler_campaign.case_key


def protocol_record(case: dict) -> dict:
    return {"target": "cute_dsl", "arch": case["arch"], "case": case}


def crashed(code: int, lines: list) -> dict:
    """The answer when the adapter process itself died (it forks a child per case, so the DSL's own aborts
    do not end it): refused, "crashed", as the adapter answers a child's crash."""
    return {"verdict": "refuse", "detail": " ".join(f"crashed (exit status {code}): {' '.join(lines[-2:])}".split())}


def judgement(case: dict, answer: dict) -> dict:
    """compare() as plain JSON (a Finding's fields)."""
    import dataclasses
    return dataclasses.asdict(compare(case, answer))


COMPILER = compiler_campaign.Compiler("cute_dsl", "solver.fuzz.adapters.cute_dsl", protocol_record, crashed,
                                      judgement)
FIGURES = ("configurations", "accepted", "refused", "crashed", "elements_compared", "agreements", "disagreements")


def count_figures(figures: dict, row: dict) -> None:
    """Count one {"case", "answer", "judgement"} row into one arch's figures."""
    kind, answer = row["judgement"]["kind"], row["answer"]
    counts = {"configurations": 1, "accepted" if answer.get("verdict") == "accept" else "refused": 1,
              "crashed": int(str(answer.get("detail", "")).startswith("crashed")),
              "elements_compared": row["judgement"]["elements"],
              "agreements" if kind == "agree" else "disagreements": 1, "by_kind": {kind: 1}}
    start = figures or {**{k: 0 for k in FIGURES}, "by_kind": {}}
    figures.update(compiler_campaign.add_counts(start, counts))


def tally(summary: dict, row: dict) -> None:
    """Figures by arch (the campaign's summary)."""
    count_figures(summary.setdefault(row["case"]["arch"], {}), row)


def summarize(records: list) -> dict:
    """Figures of a campaign: records are {"case", "answer"} dicts."""
    figures: dict = {}
    for r in records:
        count_figures(figures, dict(r, judgement=judgement(r["case"], r["answer"])))
    return figures


def main(argv=None) -> int:
    return compiler_campaign.main_guard(lambda: _main(argv), "python -m solver.fuzz.compilers.cute_dsl")


def _main(argv=None) -> int:
    import sys
    from solver.shell import Parser
    parser = Parser(prog="python -m solver.fuzz.compilers.cute_dsl",
                    description="CuTe DSL campaign: run the adapter (here or on a Dask cluster), judge, record, "
                                "merge the disagreements")
    parser.add_argument("--python", default=PYTHON,
                        help=f"the interpreter of the venv that has nvidia-cutlass-dsl (default {PYTHON})")
    parser.add_argument("--arch", choices=CAMPAIGN_ARCHES, action="append", default=None,
                        help="sm90 and/or sm100 (default both)")
    parser.add_argument("--count", type=compiler_campaign.count_argument, default=2000,
                        help=f"configurations per arch (default 2000, at most {compiler_campaign.MAX_CASES})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--from-fuzz", action="store_true", help="take the cases from `layoutproof fuzz --target "
                        "cute-dsl` (Z3-anchored, valid and each rule broken alone) instead of the random sampler")
    parser.add_argument("--out", required=True, help="JSON lines: case, answer, judgement (in case order)")
    compiler_campaign.add_arguments(
        parser, "merge the campaign into this recording (.json.gz: its provenance header, figures by arch, "
                "records by arch; created if missing, each case kept once)",
        "counterexamples/against/cute_dsl/disagreements.json")
    args = parser.parse_args(argv)
    if args.from_fuzz and args.count > 10_000:
        raise compiler_campaign.CampaignUsage("--from-fuzz: --count at most 10000 (fuzz's --count cap)")
    compiler_campaign.check_files(args)
    command = compiler_campaign.adapter_argument(args)
    client = compiler_campaign.connect(args)
    draw = fuzz_cases if args.from_fuzz else generate
    cases = [c for arch in (args.arch or CAMPAIGN_ARCHES) for c in draw(arch, args.count, args.seed)]
    try:
        result = compiler_campaign.run(COMPILER, cases, args.out, tally, jobs=args.jobs, client=client,
                                       cache_path=args.cache, python=args.python, command=command)
    finally:
        compiler_campaign.disconnect(client)
    figures = result.pop("summary")
    total = sum(f["configurations"] for f in figures.values())
    print(f"{total} configurations, {result['compiled']} compiled in {result['compile_seconds']} s "
          f"({result['configs_per_second']} configs/s, {args.scheduler or f'{args.jobs} adapter processes'})",
          file=sys.stderr)
    out = {"figures": figures, **result}
    if args.record:
        out["merged"] = merge(compiler_campaign.read_results(args.out), args.record, args.counterexamples,
                              "python -m solver.fuzz.compilers.cute_dsl " + " ".join(
                                  argv if argv is not None else sys.argv[1:]),
                              run={"seed": args.seed, "seconds": result["compile_seconds"]})
    print(json.dumps(out, indent=1))
    return 0


# --- the recorded disagreements (counterexamples/against/cute_dsl/) -------------------------------------

# class key -> (which side is right, why). A class is (arch, finding kind, rule or refusal).
NOTES = {
    ("sm100", "accepts-broken-rule", "operand.swizzle.table54"): (
        "spec (the manual)",
        "PTX 9.7.16.10.3 Table 54: MN-major 8/16-bit operands take every swizzle but 128B with 32B atomicity, "
        "32-bit (tf32) MN-major operands only 128B_atom32B. The DSL builds MN_SW128_32B for 8/16-bit and "
        "MN_INTER/SW32/SW64/SW128 for tf32 (its own heuristic picks MN_SW32/MN_SW64 for tf32 when the MN "
        "extent is no multiple of 32 elements), and makes a descriptor for them. The descriptor does read "
        "the DSL's layout (spec's read map), so the DSL is self-consistent; what the manual forbids is the "
        "mode. Not confirmable here: tcgen05 needs an sm100 GPU."),
    ("sm90", "accepts-broken-rule", "operand.k_slice.inside_line"): (
        "spec (the manual), low severity",
        "PTX 9.7.16.3.1.2: a K-major swizzled row's 32-byte K slice must not cross its W-byte swizzle row. "
        "The cases put the tile at a compile-time-constant smem address 16 B aligned but not W aligned "
        "(the campaign's choice); the DSL checks only 16 B alignment (make_gmma/umma_smem_desc docstring) "
        "and builds the descriptor. Real DSL kernels allocate tiles 1024 B aligned and never hit it."),
    ("sm90", "refuses-legal", "tf32"): (
        "spec (the manual): a DSL coverage gap, not a layout bug",
        "PTX 9.7.15.5: wgmma.mma_async has .tf32 (K-major). The DSL's sm90 helper make_trivial_tiled_mma "
        "raises TypeError for TFloat32 and cute.nvgpu.warpgroup has no tf32 MMA op (F16BF16, F8, I8 only)."),
    ("sm100", "crash", "std::bad_variant_access"): (
        "the DSL contradicts itself (spec agrees the case is illegal)",
        "Forcing an MN-major SmemLayoutAtomKind on a K-major operand aborts the whole Python process on "
        "sm_100a (C++ 'terminate called after throwing std::bad_variant_access') where sm_90a reports a "
        "diagnostic ('failed to legalize operation cute_nvgpu.make_gmma_smem_desc'). The adapter runs "
        "each case in a forked child to survive it."),
}
NOTES[("sm100", "accepts-broken-rule", "operand.k_slice.inside_line")] = NOTES[
    ("sm90", "accepts-broken-rule", "operand.k_slice.inside_line")]


def finding_class(record: dict, finding: Finding) -> Optional[tuple]:
    """The class a record's disagreement (or crash) belongs to; None for plain agreement."""
    arch, detail = record["case"]["arch"], str(record["answer"].get("detail", ""))
    if detail.startswith("crashed"):
        return (arch, "crash", "std::bad_variant_access" if "bad_variant_access" in detail else detail[:60])
    if finding.kind == "agree":
        return None
    if finding.kind == "refuses-legal":
        return (arch, finding.kind, record["case"]["dtype"] if "TFloat32" in detail else detail[:60])
    return (arch, finding.kind, " ".join(finding.rules) or finding.detail[:60])


def _size(case: dict) -> tuple:
    m, n, k = case["mma_tiler"]
    return (m * n * k * case.get("stages", 1), case.get("smem_base", 0), json_key(case))


def _class_key(entry: dict) -> tuple:
    return (entry["arch"], entry["kind"], entry["what"])


def _classify(document: dict, start: dict, where: Optional[Callable[[str, int, dict], str]] = None) -> dict:
    """class key -> [(index, record)] of each arch's records from index start[arch] on (a record carries its
    "judgement" when the campaign just made it; the others are judged now). `where(arch, index, record)`
    names a record's file and line for the message of an answer the judge cannot read."""
    where = where or (lambda arch, index, _: f"records.{arch}[{index}]")
    members: dict = {}
    for arch, records in document["records"].items():
        for index in range(start.get(arch, 0), len(records)):
            record = records[index]
            finding = Finding(**record["judgement"]) if "judgement" in record else compiler_campaign.judged(
                lambda: compare(record["case"], record["answer"]), f"{where(arch, index, record)}: answer")
            key = finding_class(record, finding)
            if key is not None:
                members.setdefault(key, []).append((index, record))
    return members


def _smallest(members: list) -> dict:
    best = min((record for _, record in members), key=lambda r: _size(r["case"]))
    return {"case": best["case"], "answer": best["answer"], "call": dsl_call(best["case"])}


def _make(key: tuple, members: list, notes: Optional[dict] = None) -> dict:
    side, note = (notes or {}).get(key) or NOTES.get(key, ("undecided", "no note yet: a new class"))
    return {"arch": key[0], "kind": key[1], "what": key[2], "count": len(members),
            "indices": [i for i, _ in members], "right": side, "note": note, "reproducer": _smallest(members)}


def _grow(entry: dict, members: list) -> dict:
    """An existing class with new members: count, indices and the smallest reproducer grow; notes stay."""
    best = _smallest(members)
    keep = _size(entry["reproducer"]["case"]) <= _size(best["case"])
    return dict(entry, count=entry["count"] + len(members), indices=entry["indices"] + [i for i, _ in members],
                reproducer=entry["reproducer"] if keep else best)


def disagreements(document: dict, recording: str = "tests/hardware/cute_dsl_campaign.json.gz",
                  notes: Optional[dict] = None) -> dict:
    """{"version", "recording", "classes": [{class, side, note, count, indices, reproducer: the smallest case,
    its answer, the DSL call}]} from a recorded campaign document; `notes` (class key -> (side, note))
    before NOTES."""
    members = _classify(document, {})
    classes = [_make(key, members[key], notes) for key in sorted(members)]
    return {"version": recorded_version(document), "recording": recording, "classes": classes}


def recorded_version(document: dict) -> str:
    """The DSL version a recording names (its provenance details), "" when none."""
    return ((document.get("provenance") or {}).get("details") or {}).get("version") or ""


# What a merge reads of each file (compiler_campaign.conform): anything else is one line naming the file and
# the field, exit 2. The answer's other fields (layout, descriptors) are the judge's to read (`_classify`).
CASE_FIELDS = ("arch", "operand", "dtype", "major", "mma_tiler", "cta_group", "stages")     # dsl_call reads them


def _recorded_case(case) -> None:
    """A case as the campaign writes it: the adapter's check_case (BadCase, a ValueError, saying what is not),
    with every field dsl_call reads given."""
    adapter.check_case(case)
    missing = next((key for key in CASE_FIELDS if key not in case), None)
    if missing is not None:
        raise ValueError(f"{missing}: missing")


CASE = Checked(_recorded_case)
ANSWER = fields(optional={"verdict": (str, type(None)), "detail": str, "version": str})
JUDGEMENT = fields(closed=True, kind=OneOf(KINDS), elements=COUNT,             # a Finding's fields
                   optional={"detail": str, "rules": ListOf(str), "witness": (dict, type(None))})
ROW = fields(case=CASE, answer=ANSWER, judgement=JUDGEMENT)
_FIGURES = fields(optional={**{k: COUNT for k in FIGURES}, "by_kind": MapOf(COUNT)})
DOCUMENT = fields(provenance=compiler_campaign.provenance_shape(version=str), figures=MapOf(_FIGURES),
                  records=MapOf(ListOf(fields(case=CASE, answer=ANSWER, optional={"judgement": JUDGEMENT}))))
COUNTEREXAMPLES = fields(classes=ListOf(fields(arch=str, kind=str, what=str, count=COUNT, indices=ListOf(COUNT),
                                               reproducer=fields(case=CASE))))


def read_document(path: str) -> dict:
    """A recording (DOCUMENT, checked: CampaignUsage naming the file and field when it is not one)."""
    shown = f"--record {compiler_campaign.file_name(path)}"
    return compiler_campaign.conform(compiler_campaign.read_json(path, shown, gzipped=True), DOCUMENT, shown)


def read_counterexamples(path: str) -> dict:
    shown = f"--counterexamples {compiler_campaign.file_name(path)}"
    return compiler_campaign.conform(compiler_campaign.read_json(path, shown), COUNTEREXAMPLES, shown)


def write_document(path: str, document: dict) -> None:
    compiler_campaign.write_atomically(path, lambda h: json.dump(document, h, separators=(",", ":")),
                                       binary_gzip=True)


def write_counterexamples(path: str, found: dict) -> None:
    compiler_campaign.write_atomically(path, lambda h: h.write(json.dumps(found, indent=1) + "\n"))


def recording_provenance(version: str, command: str, run: Optional[dict] = None) -> dict:
    """The provenance header of a new recording (solver/provenance.py): `command` the campaign's or merge's,
    `run` its seed and seconds."""
    return provenance.header(
        what="A CuTe DSL campaign (fuzz --against the CUTLASS CuTe DSL): per arch, each configuration's case and "
             "the DSL's answer, and the arch's figures.",
        recorded_by="solver/fuzz/compilers/cute_dsl.py", command=command or provenance.NOT_RECORDED,
        source=version or provenance.NOT_RECORDED, date=provenance.today(),
        details={"version": version, "seed": (run or {}).get("seed"), "seconds": (run or {}).get("seconds")})


def merge(results: list, record: str, counterexamples: Optional[str] = None, found_by: str = "",
          run: Optional[dict] = None, origins: Optional[list] = None) -> dict:
    """Merge campaign rows ({"case", "answer", "judgement"}, from any number of runs and machines) into the
    recording `record` (made if missing; a case already there is kept as it is: indices stay valid) and,
    given, into the counterexample file `counterexamples` (classes (arch, kind, what), each case once, its
    notes kept). Returns what changed. `origins`: where each result row comes from (its file and line), for
    the messages; the files read here are checked (CampaignUsage naming the file and field)."""
    origins = origins or [f"campaign row {i + 1}" for i in range(len(results))]
    results = [compiler_campaign.conform(r, ROW, w) for r, w in zip(results, origins)]
    shown = compiler_campaign.file_name(record)
    version, version_from = next(((r["answer"]["version"], w) for r, w in zip(results, origins)
                                  if r["answer"].get("version")), (None, None))
    if os.path.exists(record):
        document = read_document(record)
        recorded = recorded_version(document)
        if version and recorded and recorded != version:
            raise compiler_campaign.CampaignUsage(
                f"--record {shown}: provenance.details.version: {recorded!r:.40}; {version_from}: answer.version: "
                f"{version!r:.40}: one version per recording")
    else:
        document = {"provenance": recording_provenance(version or "", found_by, run), "figures": {}, "records": {}}
    before = {arch: len(records) for arch, records in document["records"].items()}
    old = None
    if counterexamples and os.path.exists(counterexamples):
        old = read_counterexamples(counterexamples)
        for i, entry in enumerate(old["classes"]):
            if max(entry["indices"], default=-1) >= before.get(entry["arch"], 0):
                raise compiler_campaign.CampaignUsage(
                    f"--counterexamples {compiler_campaign.file_name(counterexamples)}: classes[{i}].indices: "
                    f"{max(entry['indices'])} is past the {before.get(entry['arch'], 0)} records of arch "
                    f"{entry['arch'][:20]!r} in --record {shown}: not its recording")
    added_total = conflicts = 0
    arches = list(document["records"]) + [a for a in dict.fromkeys(r["case"]["arch"] for r in results)
                                          if a not in document["records"]]
    for arch in arches:
        records = document["records"].get(arch, [])
        _, added, clashes = compiler_campaign.merge_rows(records, [r for r in results if r["case"]["arch"] == arch])
        document["figures"][arch] = compiler_campaign.added_counts(
            document["figures"].get(arch) or {**{k: 0 for k in FIGURES}, "by_kind": {}}, added, count_figures)
        document["records"][arch] = records + [{"case": r["case"], "answer": r["answer"], "judgement": r["judgement"]}
                                               for r in added]
        added_total += len(added)
        conflicts += clashes
    report = {"record": record, "cases": sum(len(rs) for rs in document["records"].values()), "added": added_total,
              "already_there": len(results) - added_total, "other_answer_kept": conflicts}
    if counterexamples:
        origin = dict(zip(map(json_key, (r["case"] for r in results)), origins))
        members = _classify(document, before if old is not None else {}, lambda arch, index, rec: origin.get(
            json_key(rec["case"]), f"--record {shown}: records.{arch}[{index}]"))
        if old is None:
            old = {"version": recorded_version(document), "recording": record, "classes": []}
        classes = compiler_campaign.merge_classes(old["classes"], members, _class_key, _grow, _make)
        old["classes"] = sorted(classes, key=_class_key)
        write_counterexamples(counterexamples, old)
        report["counterexamples"] = {"/".join(_class_key(c)): c["count"] for c in old["classes"]}
    for records in document["records"].values():          # the recording keeps {case, answer}
        for record_ in records:
            record_.pop("judgement", None)
    write_document(record, document)
    return report


def dsl_call(case: dict) -> str:
    """The DSL calls a case stands for, as the adapter makes them (solver/fuzz/adapters/cute_dsl.py)."""
    m, n, k = case["mma_tiler"]
    from solver.fuzz.adapters.cute_dsl import DTYPES
    dt = "cutlass." + DTYPES[case["dtype"]]
    major = f"OperandMajorMode.{case['major']}"
    a, b = (major, "OperandMajorMode.K") if case["operand"] == "A" else ("OperandMajorMode.K", major)
    if case["arch"] == "sm90":
        mma = f"sm90_utils.make_trivial_tiled_mma({dt}, {dt}, {a}, {b}, acc, ({max(m // 64, 1)},1,1), (64, {n}))"
        enum = "LayoutEnum.ROW_MAJOR" if case["major"] == "K" else "LayoutEnum.COL_MAJOR"
        smem = f"sm90_utils.make_smem_layout_{case['operand'].lower()}({enum}, ({m},{n},{k}), {dt}, {case['stages']})"
    else:
        group = "CtaGroup.ONE" if case["cta_group"] == 1 else "CtaGroup.TWO"
        mma = f"sm100_utils.make_trivial_tiled_mma({dt}, {dt}, {a}, {b}, acc, {group}, ({m}, {n}))"
        smem = f"sm100_utils.make_smem_layout_{case['operand'].lower()}(tiled_mma, ({m},{n},{k}), {dt}, {case['stages']})"
    atom = case.get("atom")
    forced = f" with the atom heuristic returning SmemLayoutAtomKind.{atom}" if atom else ""
    return (f"CUTE_DSL_ARCH={'sm_90a' if case['arch'] == 'sm90' else 'sm_100a'}; tiled_mma = {mma}; "
            f"layout = {smem}{forced}; ptr = cute.make_ptr({dt}, {case.get('smem_base', 0)}, smem, "
            f"assumed_align=16, swizzle_=layout.inner); tiled_mma.make_fragment_{case['operand']}("
            f"<partition of> cute.make_tensor(ptr, layout.outer))")


def refresh(path: str, counterexamples: str) -> dict:
    """Recompute a recorded campaign's figures and classes against spec today (after a spec change) and
    rewrite both files; the notes written in the counterexample file are kept for the classes it has."""
    document = read_document(path)
    document["figures"] = {arch: summarize(rs) for arch, rs in document["records"].items()}
    write_document(path, document)
    notes, recording = {}, path
    if os.path.exists(counterexamples):
        with open(counterexamples) as handle:
            old = json.load(handle)
        notes = {_class_key(c): (c["right"], c["note"]) for c in old["classes"]}
        recording = old.get("recording", path)
    write_counterexamples(counterexamples, disagreements(document, recording, notes))
    return document["figures"]


if __name__ == "__main__":
    raise SystemExit(main())
