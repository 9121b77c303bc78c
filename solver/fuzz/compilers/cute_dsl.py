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

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

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


# --- the campaign: cases, running the adapter, recording ------------------------------------------------

DTYPE_NAMES = ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8")
SM90_ATOMS = tuple(k for k in ATOM_KINDS if k != "MN_SW128_32B")
CAMPAIGN_ARCHES = ("sm90", "sm100")


def generate(arch: str, count: int, seed: int) -> list:
    """`count` distinct cute_dsl cases on `arch`, sampled over the DSL's parameters (atom: the helper's
    own choice in a quarter of the cases, every SmemLayoutAtomKind otherwise, of either major)."""
    import random
    rng = random.Random(f"{arch}:{seed}")
    atoms = SM90_ATOMS if arch == "sm90" else tuple(ATOM_KINDS)
    seen, cases = set(), []
    while len(cases) < count:
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
        case = {"arch": arch, "operand": rng.choice(("A", "B")), "dtype": d, "major": major, "atom": atom,
                "mma_tiler": [m, n, k_tile], "cta_group": group, "smem_base": base,
                "stages": rng.choice((1, 1, 2))}
        key = json_key(case)
        if key not in seen:
            seen.add(key)
            cases.append(case)
    return cases


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


def json_key(case: dict) -> str:
    import json
    return json.dumps(case, sort_keys=True)


def run_adapter(cases: list, command: list, label: str = "", progress=None) -> list:
    """Feed `cases` as cute_dsl records to the adapter `command`; its answers, in order."""
    import json
    import subprocess
    import threading
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def feed():
        for i, case in enumerate(cases):
            proc.stdin.write(json.dumps({"index": i, "target": "cute_dsl", "arch": case["arch"], "case": case}) + "\n")
        proc.stdin.close()
    threading.Thread(target=feed, daemon=True).start()
    answers = []
    for line in proc.stdout:
        answers.append(json.loads(line))
        if progress and len(answers) % 100 == 0:
            progress(f"{label} {len(answers)}/{len(cases)}")
    proc.wait()
    if len(answers) != len(cases):
        raise RuntimeError(f"{label}: the adapter answered {len(answers)} of {len(cases)} records")
    return answers


def summarize(records: list) -> dict:
    """Figures of a campaign: records are {"case", "answer"} dicts."""
    figures = {"configurations": len(records), "accepted": 0, "refused": 0, "crashed": 0, "elements_compared": 0,
               "agreements": 0, "disagreements": 0, "by_kind": {}}
    for r in records:
        f = compare(r["case"], r["answer"])
        figures["accepted" if r["answer"].get("verdict") == "accept" else "refused"] += 1
        figures["crashed"] += str(r["answer"].get("detail", "")).startswith("crashed")
        figures["elements_compared"] += f.elements
        figures["agreements" if f.kind == "agree" else "disagreements"] += 1
        figures["by_kind"][f.kind] = figures["by_kind"].get(f.kind, 0) + 1
    return figures


def main(argv=None) -> int:
    import argparse
    import gzip
    import json
    import sys
    import time
    from concurrent.futures import ThreadPoolExecutor
    parser = argparse.ArgumentParser(prog="python -m solver.fuzz.compilers.cute_dsl",
                                     description="CuTe DSL campaign: run the adapter, record, compare")
    parser.add_argument("--python", default="/work/venvs/cutedsl/bin/python",
                        help="the interpreter of the venv that has nvidia-cutlass-dsl")
    parser.add_argument("--count", type=int, default=2000, help="configurations per arch")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--from-fuzz", action="store_true", help="take the cases from `layoutproof fuzz --target "
                        "cute-dsl` (Z3-anchored, valid and each rule broken alone) instead of the random sampler")
    parser.add_argument("--out", default="tests/hardware/cute_dsl_campaign.json.gz")
    parser.add_argument("--counterexamples", default="counterexamples/against/cute_dsl/disagreements.json")
    args = parser.parse_args(argv)
    command = [args.python, "-m", "solver.fuzz.adapters.cute_dsl"]
    log = lambda text: print(text, file=sys.stderr, flush=True)   # noqa: E731
    started = time.time()
    with ThreadPoolExecutor(len(CAMPAIGN_ARCHES)) as pool:   # one adapter process per arch
        jobs = {arch: pool.submit(lambda a: (lambda cs: (cs, run_adapter(cs, command, a, log)))(
            (fuzz_cases if args.from_fuzz else generate)(a, args.count, args.seed)), arch) for arch in CAMPAIGN_ARCHES}
        results = {arch: job.result() for arch, job in jobs.items()}
    elapsed = time.time() - started
    records = {arch: [{"case": c, "answer": a} for c, a in zip(*results[arch])] for arch in CAMPAIGN_ARCHES}
    version = next((r["answer"].get("version") for rs in records.values() for r in rs if r["answer"].get("version")), "")
    document = {"version": version, "seed": args.seed, "seconds": round(elapsed, 1),
                "figures": {arch: summarize(rs) for arch, rs in records.items()}, "records": records}
    with gzip.open(args.out, "wt") as handle:
        json.dump(document, handle, separators=(",", ":"))
    total = sum(len(rs) for rs in records.values())
    log(f"{total} configurations in {elapsed:.1f} s ({total / elapsed:.1f} configs/s, "
        f"{len(CAMPAIGN_ARCHES)} processes); written to {args.out}")
    print(json.dumps(refresh(args.out, args.counterexamples), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


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


def disagreements(document: dict) -> dict:
    """{"version", "classes": [{class, side, note, count, reproducer: the smallest case, its answer, the
    DSL call}]} from a recorded campaign document."""
    classes: dict = {}
    for arch, records in document["records"].items():
        for index, record in enumerate(records):
            key = finding_class(record, compare(record["case"], record["answer"]))
            if key is None:
                continue
            entry = classes.setdefault(key, {"count": 0, "indices": [], "best": None})
            entry["count"] += 1
            entry["indices"].append(index)
            if entry["best"] is None or _size(record["case"]) < _size(entry["best"]["case"]):
                entry["best"] = record
    out = []
    for key, entry in sorted(classes.items()):
        side, note = NOTES.get(key, ("undecided", "no note yet: a new class"))
        case = entry["best"]["case"]
        out.append({"arch": key[0], "kind": key[1], "what": key[2], "count": entry["count"],
                    "indices": entry["indices"], "right": side, "note": note,
                    "reproducer": {"case": case, "answer": entry["best"]["answer"], "call": dsl_call(case)}})
    return {"version": document.get("version", ""), "recording": "tests/hardware/cute_dsl_campaign.json.gz",
            "classes": out}


def dsl_call(case: dict) -> str:
    """The DSL calls a case stands for, as the adapter makes them (solver/fuzz/adapters/cute_dsl.py)."""
    m, n, k = case["mma_tiler"]
    dt = "cutlass." + {"f16": "Float16", "bf16": "BFloat16", "tf32": "TFloat32", "e4m3": "Float8E4M3FN",
                       "e5m2": "Float8E5M2", "s8": "Int8", "u8": "Uint8"}[case["dtype"]]
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
    """Recompute a recorded campaign's figures against spec today and rewrite its counterexample file."""
    import gzip
    import json
    with gzip.open(path, "rt") as handle:
        document = json.load(handle)
    document["figures"] = {arch: summarize(rs) for arch, rs in document["records"].items()}
    with gzip.open(path, "wt") as handle:
        json.dump(document, handle, separators=(",", ":"))
    found = disagreements(document)
    with open(counterexamples, "w") as handle:
        json.dump(found, handle, indent=1)
        handle.write("\n")
    return document["figures"]
