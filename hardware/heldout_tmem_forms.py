"""A held-out sample of tcgen05 instruction forms, judged by ptxas and by `layoutproof tmem check`:
tests/hardware/tmem_ptxas_heldout.json.gz.

The recorded grid (hardware/run_tmem_ptxas_forms.py, tests/hardware/tmem_ptxas_forms.json.gz) is what
spec/tmem was written against; this sample is what it was *not* written against. Each form is a valid
tcgen05 instruction drawn at random (ld, st, ld.red, alloc, dealloc, relinquish_alloc_permit,
wait::ld / wait::st, cp, shift: the instructions `tmem check` models) with one or two random mutations:

  * immediates (decimal, hex, octal, binary, negative, with a U suffix) in place of a vector element,
    the tensor-memory address, an address offset, redval, s-desc, nCols, the half-split offset;
  * qualifiers repeated, conflicting (a second value of the same kind: shape, .num, packing, type,
    .cta_group, reduction, multicast, format, direction), reordered, dropped, or borrowed from another
    instruction of the family;
  * operands dropped, added, swapped or moved; vectors one register short or long, holding a .b64
    register or unbraced; addresses [%rd], [name], [imm], unbracketed;
  * other members of the family and near misses: tcgen05.wait::mma, tcgen05.wait, a misspelt name;
    qualifiers respelt (.x02, .cta_group::01, upper case, an empty one), a tab after the mnemonic,
    blanks in or out of vectors and addresses; and the valid form itself, now and then.

Forms that are in the recorded grid (same text, target and version) are drawn again. Every form is
assembled alone with `ptxas -arch=<target>` (no batching: a syntax error spoils the messages of the
other kernels of a batch), on targets drawn from sm_100a sm_100f sm_103a sm_103f sm_110a sm_110f
(sm_90a and sm_120a now and then) under PTX 9.0 (8.6, 8.7 or 8.8 now and then). Then spec.tmem.instruction.check
judges the same text: it agrees when it says ptxas accepts exactly when ptxas did. A SpecError (exit 2
in the CLI: a text outside the operand convention) counts as a disagreement: the sample draws only
operands inside it (%r<n>, %rd<n>, the .shared name `sh`, integer literals).

The generator does not import spec/ or solver/ (the sample must not lean on the model it tests); only
the comparison does, and the writing of the record's provenance header (solver/provenance.py). The
record keeps every form with ptxas's verdict and first error (as run_tmem_ptxas_forms.assemble_alone gives
it) and spec's verdict at recording time;
tests/hardware_replay/test_tmem_ptxas_heldout.py replays the ptxas verdicts against spec without ptxas.

Usage (from the repository root):
  python3 hardware/heldout_tmem_forms.py --seed S [--count 2000] [--out tests/hardware/tmem_ptxas_heldout.json.gz]
                                         [--jobs 2] [--no-record]
"""
from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run_tmem_ptxas_forms as runner  # noqa: E402  (same folder; self-contained)

DEFAULT_OUT = os.path.join("tests", "hardware", "tmem_ptxas_heldout.json.gz")
GRID = os.path.join("tests", "hardware", "tmem_ptxas_forms.json.gz")
TARGETS = ("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f")
RARE_TARGETS = ("sm_90a", "sm_120a")

LD_SHAPES = ("16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2")
REGS_PER_NUM = {"16x64b": 1, "16x128b": 2, "16x256b": 4, "32x32b": 1, "16x32bx2": 1}
NUMS = (1, 2, 4, 8, 16, 32, 64, 128)
CP_SHAPES = {"128x256b": (None,), "4x256b": (None,), "128x128b": (None,),
             "64x128b": ("warpx2::02_13", "warpx2::01_23"), "32x128b": ("warpx4",)}
CP_FORMATS = (None, "b8x16.b6x16_p32", "b8x16.b4x16_p64")
TYPES = ("b32", "u32", "s32", "f32", "b64", "f16", "b16")

# Qualifiers of each kind, for conflicting and borrowed ones.
SAME_KIND = {
    "shape": LD_SHAPES + ("16x512b", "128x256b", "31x256b"),
    "num": tuple(f"x{n}" for n in NUMS) + ("x3", "x256"),
    "pack": ("pack::16b", "unpack::16b"),
    "type": TYPES,
    "cta_group": ("cta_group::1", "cta_group::2", "cta_group::3"),
    "red_op": ("min", "max", "add"),
    "multicast": ("warpx2::02_13", "warpx2::01_23", "warpx4"),
    "format": ("b8x16", "b6x16_p32", "b4x16_p64"),
    "direction": ("down", "up"),
    "space": ("shared::cta", "shared::cluster"),
    "sync": ("sync",),
    "aligned": ("aligned",),
    "abs": ("abs",),
    "nan": ("NaN",),
}
BORROWED = ("sync", "aligned", "shared::cta", "cta_group::1", "down", "pack::16b", "unpack::16b", "warpx4",
            "abs", "NaN", "min", "b32", "u32", "x2", "32x32b", "128x256b", "b8x16", "red", "ld", "mma",
            "wait::ld", "multicast::cluster")


def kind_of(qualifier: str):
    for kind, values in SAME_KIND.items():
        if qualifier in values:
            return kind
    if qualifier.startswith("x") and qualifier[1:].isdigit():
        return "num"
    return None


# --- Literals ------------------------------------------------------------------------------------------
def literal(rng: random.Random, value: int) -> str:
    """`value` written as a PTX integer literal: decimal, hex, octal, binary, perhaps with a U suffix."""
    if value < 0:
        return "-" + literal(rng, -value)
    style = rng.choice(("dec", "dec", "hex", "HEX", "oct", "bin", "decU", "hexU"))
    if style == "hex":
        text = f"0x{value:x}"
    elif style == "HEX":
        text = f"0X{value:X}"
    elif style == "oct":
        text = f"0{value:o}" if value else "0"
    elif style == "bin":
        text = f"0b{value:b}"
    elif style == "hexU":
        text = f"0x{value:x}U"
    elif style == "decU":
        text = f"{value}U"
    else:
        text = str(value)
    return text


def some_value(rng: random.Random) -> int:
    return rng.choice((0, 1, 2, 4, 7, 16, 31, 32, 33, 48, 64, 96, 128, 256, 512, 1024, 65536, 0x200000,
                       2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 32, -1, -16, -32))


# --- Valid forms -----------------------------------------------------------------------------------------
class Form:
    """tcgen05.<name>.<qualifiers> <operands>: lists the mutations edit."""

    def __init__(self, name: str, qualifiers: list, operands: list, roles: list, separator: str = " "):
        self.name, self.qualifiers, self.operands, self.roles = name, list(qualifiers), list(operands), list(roles)
        self.separator = separator             # between the mnemonic and the operands

    def text(self) -> str:
        head = "tcgen05." + ".".join([self.name] + self.qualifiers)
        return head + (self.separator + ", ".join(self.operands) if self.operands else "")

    def copy(self) -> "Form":
        return Form(self.name, self.qualifiers, self.operands, self.roles, self.separator)


def vector(count: int, first: int = 1) -> str:
    return "{" + ", ".join(f"%r{first + i}" for i in range(count)) + "}"


def small_num(rng: random.Random, shape: str, least: int = 1) -> int:
    """A legal .num for the shape, mostly small (short vectors), now and then the largest."""
    legal = [n for n in NUMS if n * REGS_PER_NUM[shape] <= 128 and n >= least]
    return rng.choice(legal) if rng.random() < 0.1 else rng.choice([n for n in legal if n <= 8] or legal)


def address(rng: random.Random) -> str:
    return rng.choice(("[%r0]", "[%r0]", "[%r0]", "[%r0+16]", f"[%r0+{literal(rng, 4)}]", "[%r9+0x200000]"))


def make_ld(rng: random.Random) -> Form:
    shape = rng.choice(LD_SHAPES)
    num = small_num(rng, shape)
    quals = ["sync", "aligned", shape, f"x{num}"] + (["pack::16b"] if rng.random() < 0.3 else []) + ["b32"]
    ops, roles = [vector(num * REGS_PER_NUM[shape]), address(rng)], ["vector", "taddr"]
    if shape == "16x32bx2":
        ops, roles = ops + [literal(rng, rng.choice((0, 2, 16, 64)))], roles + ["splitoff"]
    return Form("ld", quals, ops, roles)


def make_st(rng: random.Random) -> Form:
    shape = rng.choice(LD_SHAPES)
    num = small_num(rng, shape)
    quals = ["sync", "aligned", shape, f"x{num}"] + (["unpack::16b"] if rng.random() < 0.3 else []) + ["b32"]
    ops, roles = [address(rng)], ["taddr"]
    if shape == "16x32bx2":
        ops, roles = ops + [literal(rng, rng.choice((0, 2, 16, 64)))], roles + ["splitoff"]
    return Form("st", quals, ops + [vector(num * REGS_PER_NUM[shape])], roles + ["vector"])


def make_ld_red(rng: random.Random) -> Form:
    shape = rng.choice(("32x32b", "16x32bx2"))
    num = small_num(rng, shape, least=2)
    red_type = rng.choice(("f32", "u32", "s32"))
    extras = [q for q in ("abs", "NaN") if red_type == "f32" and rng.random() < 0.4]
    quals = ["sync", "aligned", shape, f"x{num}", rng.choice(("min", "max"))] + extras + [red_type]
    ops = [vector(num), rng.choice(("%r200", "{%r200}")), address(rng)]
    roles = ["vector", "redval", "taddr"]
    if shape == "16x32bx2":
        ops, roles = ops + [literal(rng, 16)], roles + ["splitoff"]
    return Form("ld.red", quals, ops, roles)


def make_alloc(rng: random.Random) -> Form:
    quals = [rng.choice(("cta_group::1", "cta_group::2")), "sync", "aligned"]
    quals += (["shared::cta"] if rng.random() < 0.7 else []) + ["b32"]
    dst = rng.choice(("[sh]", "[sh+4]", "[%r3]", "[%rd3]", "[%rd3+8]"))
    ncols = rng.choice((literal(rng, rng.choice((32, 64, 128, 256, 512))), "%r5"))
    return Form("alloc", quals, [dst, ncols], ["dst", "ncols"])


def make_dealloc(rng: random.Random) -> Form:
    quals = [rng.choice(("cta_group::1", "cta_group::2")), "sync", "aligned", "b32"]
    ncols = rng.choice((literal(rng, rng.choice((32, 64, 96, 128, 256, 512))), "%r5"))
    return Form("dealloc", quals, [rng.choice(("%r0", "%r0", literal(rng, 0))), ncols], ["taddr", "ncols"])


def make_relinquish(rng: random.Random) -> Form:
    return Form("relinquish_alloc_permit", [rng.choice(("cta_group::1", "cta_group::2")), "sync", "aligned"], [], [])


def make_wait(rng: random.Random) -> Form:
    return Form(rng.choice(("wait::ld", "wait::st")), ["sync", "aligned"], [], [])


def make_cp(rng: random.Random) -> Form:
    shape = rng.choice(sorted(CP_SHAPES))
    multicast = rng.choice(CP_SHAPES[shape])
    fmt = rng.choice(CP_FORMATS)
    quals = [rng.choice(("cta_group::1", "cta_group::2")), shape] + ([multicast] if multicast else [])
    quals += fmt.split(".") if fmt else []
    return Form("cp", quals, [rng.choice(("[%r0]", "[%r0+16]")), "%rd1"], ["taddr", "sdesc"])


def make_shift(rng: random.Random) -> Form:
    return Form("shift", [rng.choice(("cta_group::1", "cta_group::2")), "down"],
                [rng.choice(("[%r0]", "[%r0+32]"))], ["taddr"])


MAKERS = (make_ld, make_ld, make_st, make_st, make_st, make_ld_red, make_alloc, make_dealloc, make_relinquish,
          make_wait, make_cp, make_shift)


# --- Mutations -------------------------------------------------------------------------------------------
def _vector_items(text: str) -> list:
    return [item.strip() for item in text[1:-1].split(",")] if text.startswith("{") else None


def _pick_vector(rng, form):
    """(index, items) of one of the form's vector operands, drawn; None when it has none."""
    spots = [i for i, text in enumerate(form.operands) if text.startswith("{")]
    if not spots:
        return None
    i = rng.choice(spots)
    return i, _vector_items(form.operands[i])


def imm_in_vector(rng, form):
    picked = _pick_vector(rng, form)
    if picked is None:
        return None
    i, items = picked
    count = rng.choice((1, 1, 1, 2, len(items)))
    for j in rng.sample(range(len(items)), min(count, len(items))):
        items[j] = literal(rng, some_value(rng))
    form.operands[i] = "{" + ", ".join(items) + "}"
    return form


def imm_operand(rng, form):
    """An immediate in place of a scalar operand or of the address."""
    if not form.operands:
        return None
    i = rng.randrange(len(form.operands))
    value = literal(rng, some_value(rng))
    if form.operands[i].startswith("["):
        form.operands[i] = rng.choice((f"[{value}]", f"[%r0+{value}]", value))
    elif form.operands[i].startswith("{"):
        form.operands[i] = rng.choice((value, "{" + value + "}"))
    else:
        form.operands[i] = value
    return form


def repeat_qualifier(rng, form):
    if not form.qualifiers:
        return None
    q = rng.choice(form.qualifiers)
    form.qualifiers.insert(rng.randint(0, len(form.qualifiers)), q)
    return form


def conflicting_qualifier(rng, form):
    kinds = [(i, kind_of(q)) for i, q in enumerate(form.qualifiers) if kind_of(q)]
    kinds = [(i, k) for i, k in kinds if len(SAME_KIND.get(k, ())) > 1 or k == "num"]
    if not kinds:
        return None
    i, kind = rng.choice(kinds)
    others = [q for q in SAME_KIND[kind] if q != form.qualifiers[i]]
    new = rng.choice(others)
    if rng.random() < 0.5:
        form.qualifiers.insert(rng.randint(0, len(form.qualifiers)), new)
    else:
        form.qualifiers[i] = new           # replaced: a value of the right kind, maybe the wrong one
    return form


def reorder_qualifiers(rng, form):
    if len(form.qualifiers) < 2:
        return None
    rng.shuffle(form.qualifiers)
    return form


def drop_qualifier(rng, form):
    if not form.qualifiers:
        return None
    form.qualifiers.pop(rng.randrange(len(form.qualifiers)))
    return form


def borrow_qualifier(rng, form):
    form.qualifiers.insert(rng.randint(0, len(form.qualifiers)), rng.choice(BORROWED))
    return form


def drop_operand(rng, form):
    if not form.operands:
        return None
    i = rng.randrange(len(form.operands))
    form.operands.pop(i)
    form.roles.pop(i)
    return form


def extra_operand(rng, form):
    extra = rng.choice(("%r7", "%rd7", literal(rng, some_value(rng)), "[%r0]", "{%r7}", "sh"))
    i = rng.randint(0, len(form.operands))
    form.operands.insert(i, extra)
    form.roles.insert(i, "extra")
    return form


def swap_operands(rng, form):
    if len(form.operands) < 2:
        return None
    i, j = rng.sample(range(len(form.operands)), 2)
    form.operands[i], form.operands[j] = form.operands[j], form.operands[i]
    form.roles[i], form.roles[j] = form.roles[j], form.roles[i]
    return form


def vector_shape(rng, form):
    picked = _pick_vector(rng, form)
    if picked is None:
        return None
    i, items = picked
    how = rng.choice(("short", "long", "b64", "bare", "repeat", "empty"))
    if how == "short" and len(items) > 1:
        items = items[:-1]
    elif how == "long":
        items = items + [f"%r{150 + len(items)}"]
    elif how == "b64":
        items[rng.randrange(len(items))] = "%rd2"
    elif how == "repeat":
        items[-1] = items[0]
    elif how == "bare" and len(items) == 1:
        form.operands[i] = items[0]
        return form
    elif how == "empty":
        items = []
    form.operands[i] = "{" + ", ".join(items) + "}"
    return form


def address_form(rng, form):
    spots = [i for i, text in enumerate(form.operands) if text.startswith("[") or form.roles[i] == "taddr"]
    if not spots:
        return None
    i = rng.choice(spots)
    form.operands[i] = rng.choice(("[%rd0]", "[sh]", "[sh+4]", "%r0", "[%r0+-4]", "[%r0+0x100000000]",
                                   f"[{literal(rng, some_value(rng))}]", "[%r0+%r1]", "{%r0}", "[%r1]"))
    return form


def other_register(rng, form):
    """A scalar operand (redval, s-desc, nCols, taddr of dealloc, the split offset) of another width."""
    spots = [i for i, text in enumerate(form.operands) if not text.startswith(("[", "{"))]
    if not spots:
        return None
    i = rng.choice(spots)
    form.operands[i] = rng.choice(("%r6", "%rd6", "sh", "{%r6}", "{%r6, %r7}"))
    return form


def family_name(rng, form):
    """Another or a misspelt member of the family, the qualifiers and operands kept."""
    form.name = rng.choice(("wait::mma", "wait", "wait::ld::st", "wait::ldst", "lds", "ld.red.red",
                            "st.red", "relinquish_alloc", "alloc::cta", "dealloc.alloc", "cp.shift",
                            "shift::down", "red.ld", "ld.st", "stld"))
    return form


def spacing(rng, form):
    """Blanks inside vectors and addresses, or none at all (ptxas reads both)."""
    if not form.operands:
        return None
    squeeze = rng.random() < 0.5
    for i, text in enumerate(form.operands):
        if squeeze:
            form.operands[i] = text.replace(" ", "")
        else:
            form.operands[i] = (text.replace("{", "{ ").replace("}", " }").replace(",", " ,")
                                .replace("[", "[ ").replace("]", " ]").replace("+", " + "))
    return form


def respell(rng, form):
    """A qualifier respelt: a leading zero in a number, upper case, an empty qualifier (two dots), or the
    mnemonic ended by a tab."""
    how = rng.choice(("zero", "upper", "dots", "tab"))
    if how == "tab":
        form.separator = "\t"
        return form
    if how == "dots" or not form.qualifiers:
        form.qualifiers.insert(rng.randint(0, len(form.qualifiers)), "")
        return form
    i = rng.randrange(len(form.qualifiers))
    q = form.qualifiers[i]
    if how == "upper":
        form.qualifiers[i] = q.upper() if rng.random() < 0.5 else q[:1].upper() + q[1:]
    else:
        digits = [j for j, c in enumerate(q) if c.isdigit() and (j == 0 or not q[j - 1].isdigit())]
        if not digits:
            return None
        j = rng.choice(digits)
        form.qualifiers[i] = q[:j] + "0" + q[j:]
    return form


def unchanged(rng, form):
    """No change: the valid form itself (on a target and version that may not have it)."""
    return form


MUTATIONS = (unchanged, spacing, respell, imm_in_vector, imm_in_vector, imm_operand, imm_operand, repeat_qualifier, repeat_qualifier,
             conflicting_qualifier, conflicting_qualifier, reorder_qualifiers, drop_qualifier,
             borrow_qualifier, drop_operand, extra_operand, swap_operands, swap_operands, vector_shape,
             address_form, other_register, family_name)


def mutated(rng: random.Random) -> tuple:
    """(text, [mutation names]): a valid form with one mutation (a third of the time two)."""
    while True:
        form = rng.choice(MAKERS)(rng)
        names = []
        for _ in range(2 if rng.random() < 0.33 else 1):
            mutation = rng.choice(MUTATIONS)
            changed = mutation(rng, form.copy())
            if changed is not None:
                form = changed
                names.append(mutation.__name__)
        if names:
            return form.text(), names


def draw(seed: int, count: int, grid: set) -> list:
    """count forms: {"instruction", "target", "ptx_version", "mutations"}, none in the grid, no repeats."""
    rng = random.Random(seed)
    seen, forms = set(), []
    while len(forms) < count:
        text, names = mutated(rng)
        target = rng.choice(RARE_TARGETS) if rng.random() < 0.04 else rng.choice(TARGETS)
        version = rng.choice(("8.6", "8.7", "8.8")) if rng.random() < 0.1 else "9.0"
        key = (text, target, version)
        if key in grid or key in seen:
            continue
        seen.add(key)
        forms.append({"instruction": text, "target": target, "ptx_version": version, "mutations": names})
    return forms


def load_grid(path: str) -> set:
    with gzip.open(path, "rt") as handle:
        return {(f["instruction"], f["target"], f["ptx_version"]) for f in json.load(handle)["forms"]}


# --- Judging ---------------------------------------------------------------------------------------------
def assemble(ptxas: str, forms: list, jobs: int) -> None:
    """Adds "accepted" and "error" (ptxas's first error) to each form, each assembled alone."""
    def one(form):
        return runner.assemble_alone(ptxas, form["target"], form["ptx_version"], 0, form["instruction"])
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for form, (accepted, error) in zip(forms, pool.map(one, forms)):
            form["accepted"], form["error"] = accepted, error


def spec_verdict(form: dict) -> tuple:
    """(spec says ptxas accepts: True / False / None for no verdict, the first violation or the error)."""
    sys.path.insert(0, REPOSITORY)
    from spec.rule import SpecError
    from spec.tmem import instruction
    try:
        result = instruction.check(form["instruction"], form["target"], form["ptx_version"])
    except SpecError as error:
        return None, f"SpecError: {error}"
    first = result["violations"][0] if result["violations"] else None
    return result["ptxas_accepts"], (f"{first.rule.id}: {first.message}" if first else None)


def compare(forms: list) -> dict:
    disagreements = []
    for form in forms:
        accepts, reason = spec_verdict(form)
        form["spec_accepts"] = accepts
        if accepts != form["accepted"]:
            disagreements.append({"instruction": form["instruction"], "target": form["target"],
                                  "ptx_version": form["ptx_version"], "ptxas_accepts": form["accepted"],
                                  "ptxas_error": form["error"], "spec": reason, "mutations": form["mutations"]})
    agree = len(forms) - len(disagreements)
    by_mutation = collections.defaultdict(lambda: [0, 0])
    for form in forms:
        for name in set(form["mutations"]):
            by_mutation[name][0] += 1
            by_mutation[name][1] += form["spec_accepts"] == form["accepted"]
    return {"count": len(forms), "agree": agree, "agreement": round(agree / len(forms), 4),
            "ptxas_accepted": sum(f["accepted"] for f in forms),
            "by_mutation": {name: {"forms": n, "agree": a} for name, (n, a) in sorted(by_mutation.items())},
            "disagreements": disagreements}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--ptxas", default=None)
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-record", action="store_true", help="print the summary only")
    args = parser.parse_args(argv)
    ptxas = runner.find_ptxas(args.ptxas)
    if ptxas is None:
        print("ptxas not found", file=sys.stderr)
        return 2
    began = time.time()
    forms = draw(args.seed, args.count, load_grid(os.path.join(REPOSITORY, GRID)))
    assemble(ptxas, forms, args.jobs)
    summary = compare(forms)
    print(f"seed {args.seed}: {summary['agree']} of {summary['count']} forms agree "
          f"({100 * summary['agreement']:.2f} %), ptxas accepted {summary['ptxas_accepted']} "
          f"({time.time() - began:.0f} s)")
    for d in summary["disagreements"]:
        print(f"  {d['target']} {d['ptx_version']} ptxas {'accepts' if d['ptxas_accepts'] else 'refuses'} "
              f"({d['ptxas_error']}) | spec: {d['spec'] or 'accepts'} | {d['instruction']}")
    if args.no_record:
        return 0
    provenance = runner._provenance()
    version = runner.ptxas_version(ptxas)
    header = provenance.header(
        what="A held-out sample of tcgen05 instruction forms not in tests/hardware/tmem_ptxas_forms.json.gz, each "
             "assembled alone: ptxas's verdict and spec.tmem.instruction.check's, with the agreement.",
        recorded_by="hardware/heldout_tmem_forms.py",
        command=provenance.command_line("hardware/heldout_tmem_forms.py", argv if argv is not None else sys.argv[1:]),
        source=provenance.sentence(("ptxas:", version)), date=provenance.today(),
        details={"ptxas": version, "seed": args.seed,
                 "note": "Forms not in tests/hardware/tmem_ptxas_forms.json.gz, each assembled alone. accepted / "
                         "error: ptxas's verdict and first error; spec_accepts: spec.tmem.instruction.check's "
                         "verdict when recorded (null: SpecError)."})
    document = {"provenance": header, **summary, "forms": forms}
    provenance.write_text(args.out, runner.dumps_one_form_a_line(document))
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
