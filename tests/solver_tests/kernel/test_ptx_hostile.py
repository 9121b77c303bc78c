"""Hostile and malformed PTX for the kernel reader (`layoutproof ptx descriptors | check`, solver/kernel),
issue 25: a rule the kernel breaks is reported (exit 1), never swallowed into "no violation"; PTX ptxas
refuses is malformed (exit 2, one line naming the line); the reader's evaluation knows less past its
work bound, never something else.

Expectations come from the PTX ISA's bit tables (instruction descriptor fields, 9.7.16.4.2 Table 42), from
ptxas 13.0 (what it refuses, and how it lays shared variables out: the size of the .nv.shared section of
the cubin it writes), and from brute-force oracles written here (the loops a branch leaves, the registers
a range of statements writes).
"""
from __future__ import annotations

import io
from repo_paths import TESTS  # noqa: E402  (tests/repo_paths.py)
import json
import random

import pytest

from spec.mma import instr_desc

from solver.cli.main import main
from solver.kernel import analysis
from solver.kernel.symbolic import evaluate
from solver.kernel import mma
from solver.kernel.frontend import source

FIXTURES = TESTS / "fixtures" / "ptx"
TCGEN05 = (FIXTURES / "handwritten_tcgen05.ptx").read_text()    # see its header: words built from fields


def run(capsys, monkeypatch, text: str, *argv) -> tuple:
    """(exit status, stdout, stderr) of `layoutproof ptx ARGV... -` reading `text`."""
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    rc = main(["ptx", *argv[:1], "-", *argv[1:]])
    out, err = capsys.readouterr()
    return rc, out, err


def descriptors(capsys, monkeypatch, text: str, *argv) -> tuple:
    rc, out, err = run(capsys, monkeypatch, text, "descriptors", "--json", *argv)
    assert err == "", err
    return rc, json.loads(out)


def malformed(capsys, monkeypatch, text: str, *argv) -> str:
    rc, out, err = run(capsys, monkeypatch, text, "descriptors", *argv)
    assert rc == 2 and out == "" and err.count("\n") == 1, (rc, err)
    return err


def site_rules(site: dict) -> set:
    return {(v["operand"], v["rule"]) for v in site["violations"]}


# --- item 5b: a SpecError is a broken rule, never "no violation" ------------------------------------------------
N_FIELD = (17, 6)       # Table 42: N >> 3 in bits [17, 23)


def n_of(word: int) -> int:
    shift, width = N_FIELD
    return ((word >> shift) & ((1 << width) - 1)) << 3


def test_an_instruction_descriptor_with_n_0_breaks_mma_shape_n(capsys, monkeypatch):
    """Issue 25's word: 0x08010490 is the fixture's kind::f16 descriptor (0x08110490, N 64) with N = 0.
    Table 39 lists no N = 0."""
    assert n_of(0x08110490) == 64 and n_of(0x08010490) == 0
    rc, document = descriptors(capsys, monkeypatch, TCGEN05.replace("0x08110490", "0x08010490"), "--kernel", "one_cta")
    assert rc == 1
    first = document["sites"][0]
    assert first["shape"]["n"] == 0 and ("shape", "mma.shape.n") in site_rules(first)


def test_a_ws_mma_whose_b_has_no_rows_is_not_silent(capsys, monkeypatch):
    """.ws has no Table 39 row here, but an N of 0 gives B no rows to read: B's read request breaks
    operand.mn_extent (a positive multiple of 8 rows, PTX 9.7.16.3.3), which the reader used to drop."""
    ws_n0 = instr_desc.encode("f16", m=64, n=0, dtype=1).word          # the fixture's .ws word, N 0
    assert n_of(ws_n0) == 0 and ws_n0 == 0x04100010 & ~(0x3F << 17)
    rc, document = descriptors(capsys, monkeypatch, TCGEN05.replace("0x04100010", f"{ws_n0:#010x}"),
                               "--kernel", "one_cta")
    ws = next(site for site in document["sites"] if site["ws"])
    assert rc == 1 and ("b", "operand.mn_extent") in site_rules(ws)
    assert ws["operands"]["b"]["addresses"] is None and ws["operands"]["b"]["no_addresses"]


def test_ptx_check_of_an_mma_with_n_0_is_a_mismatch_not_malformed_input(capsys, monkeypatch):
    """The kernel's N = 0 is not malformed input to `ptx check`: exit 1, the rule named, not exit 2."""
    text = TCGEN05.replace("0x08110490", "0x08010490")
    rc, out, err = run(capsys, monkeypatch, text, "check", "--kernel", "one_cta", "--json",
                       "--layout", "B=(128,32):(32,1)@0x4400")
    assert rc == 1 and err == ""
    checks = [c for c in json.loads(out)["checks"] if c["line"] in (39, 40)]
    assert checks and all(c["status"] == "mismatch" and c["violations"] for c in checks)


@pytest.mark.parametrize("opcode, refusal", [
    ("tcgen05.mma.kind::f16", ".cta_group modifier required"),
    ("tcgen05.mma.cta_group::3.kind::f16", "Unknown modifier '.cta_group::3'"),
    ("tcgen05.mma.ws.cta_group::2.kind::f16", "Illegal modifier '.cta_group::2'"),
    ("tcgen05.mma.cta_group::1", ".kind modifier required"),
    ("tcgen05.mma.cta_group::1.kind::foo", "Unknown modifier '.kind::foo'"),
])
def test_a_tcgen05_mma_ptxas_refuses_for_its_qualifiers_is_malformed(capsys, monkeypatch, opcode, refusal):
    """ptxas 13.0 refuses each (the refusal quoted); the reader used to read a missing or unknown
    .cta_group as .cta_group::1, and an unknown .kind as a kind it cannot decode (exit 0)."""
    text = TCGEN05.replace("tcgen05.mma.cta_group::1.kind::f16 [%r10], %rd1, %rd2, %r20, %p1;",
                           f"{opcode} [%r10], %rd1, %rd2, %r20, %p1;", 1)
    err = malformed(capsys, monkeypatch, text)
    assert "line 39" in err and ("cta_group" in err or ".kind" in err)


@pytest.mark.parametrize("statement", ["wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%f1};",
                                       "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1;", "wgmma.mma_async;"])
def test_an_mma_with_too_few_operands_is_malformed(capsys, monkeypatch, statement):
    """ptxas 13.0: "Arguments mismatch for instruction ..."; the reader used to fail on them (exit 3)."""
    text = f".version 8.8\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{{\n{statement}\nret;\n}}\n"
    err = malformed(capsys, monkeypatch, text)
    assert "line 6" in err and "operands" in err


def test_the_violation_of_a_spec_error_names_its_rule():
    from spec.mma import readmap
    from spec.rule import SpecError
    error = SpecError("mn", 0, "the M or N extent must be a positive multiple of 8", readmap.MN_EXTENT.id)
    assert mma.violation_of(error) == {"rule": "operand.mn_extent", "source": readmap.MN_EXTENT.source,
                                       "message": str(error)}


# --- item 8: shared alignments ----------------------------------------------------------------------------------
SMEM_A = ".shared .align 1024 .b8 smem_a[16384];"


@pytest.mark.parametrize("align", ["0", "3", "00", "12", "4294967296", "9" * 5000])
def test_an_alignment_ptxas_refuses_is_malformed_naming_the_declaration(capsys, monkeypatch, align):
    """ptxas 13.0: "Alignment must be a power of two" (0, 3, 12; 2^32 is also a "Constant overflow").
    The reader used to divide by 0 (exit 3)."""
    err = malformed(capsys, monkeypatch, TCGEN05.replace(SMEM_A, f".shared .align {align} .b8 smem_a[16384];"))
    assert "line 15" in err and "smem_a" in err and ".align" in err and len(err) < 600


@pytest.mark.parametrize("align, value", [("0x10", 16), ("010", 8), ("0b100", 4), ("16 .align 64", 64),
                                          ("64 .align 16", 64)])
def test_alignments_ptxas_takes_place_the_symbol(capsys, monkeypatch, align, value):
    """PTX integer literals (hex, octal, binary), and the larger of two .align, as ptxas 13.0 lays them out
    (its .nv.shared sizes: .b8 first[1] then .align 010 .b8 x[1] takes 9 bytes, .align 0x10: 17, .align 16
    .align 64 in either order: 65). With --smem-base 0x401, smem_a is at the next multiple of the value."""
    text = TCGEN05.replace(SMEM_A, f".shared .align {align} .b8 smem_a[16384];")
    _, document = descriptors(capsys, monkeypatch, text, "--kernel", "one_cta", "--smem-base", "0x401")
    assert document["shared"]["one_cta"]["smem_a"] == -(-0x401 // value) * value


def test_a_vector_variable_is_its_length_times_its_type_and_aligned_to_that(capsys, monkeypatch):
    """PTX ISA 5.4.2: a .v4 .b32 element is 16 bytes, aligned to 16 by default; ptxas 13.0 lays
    `.b8 first[1]; .v4 .b32 vec[4]; .b8 after[1]` out in 81 bytes (first at 0, vec at 16, after at 80)."""
    declarations = ".shared .align 1 .b8 first[1];\n.shared .v4 .b32 vec[4];\n.shared .align 1 .b8 after[1];\n"
    text = TCGEN05.replace(SMEM_A, declarations + SMEM_A).replace(
        "mov.u32 \t%r1, smem_a;", "mov.u32 \t%r1, smem_a;\n\tmov.u32 %r30, first;\n\tmov.u32 %r30, vec;\n"
                                  "\tmov.u32 %r30, after;", 1)
    _, document = descriptors(capsys, monkeypatch, text, "--kernel", "one_cta", "--smem-base", "0")
    shared = document["shared"]["one_cta"]
    assert (shared["first"], shared["vec"], shared["after"]) == (0, 16, 80)


# --- malformed text ---------------------------------------------------------------------------------------------
def test_an_unclosed_block_comment_is_malformed(capsys, monkeypatch):
    """ptxas 13.0: "unexpected EOF while scanning"."""
    err = malformed(capsys, monkeypatch, TCGEN05 + "\n/* never closed\n")
    opened_on = TCGEN05.count("\n") + 2                   # after the file's last line and a blank one
    assert "block comment" in err and f"'line {opened_on}'" in err


def test_an_integer_literal_longer_than_any_64_bit_one_is_unknown(capsys, monkeypatch):
    """Python's int() refuses more than 4,300 digits: such a literal is read as unknown (it used to end the
    command with Python's error), never as a number."""
    text = TCGEN05.replace("0x04100010", "9" * 5000)
    rc, document = descriptors(capsys, monkeypatch, text, "--kernel", "one_cta")
    ws = next(site for site in document["sites"] if site["ws"])
    assert not ws["instr_desc"]["known"]


def test_a_wgmma_shape_of_thousands_of_digits_is_unknown(capsys, monkeypatch):
    """No wgmma shape has more than three digits a dimension (ptxas refuses any other); the reader reads it
    as unknown rather than converting 5,000 digits."""
    text = (".version 8.8\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
            f"wgmma.mma_async.sync.aligned.m64n{'9' * 5000}k16.f32.f16.f16 {{%f1}}, %rd1, %rd2, 0, 1, 1, 0, 0;\n}}\n")
    rc, document = descriptors(capsys, monkeypatch, text)
    assert rc == 0 and document["sites"][0]["shape"] == {"m": None, "n": None, "k": None}


def test_a_packing_mov_whose_parts_do_not_fill_the_destination_is_unknown():
    """ptxas 13.0 refuses `mov.b64 %rd1, {%r1}` ("Arguments mismatch for instruction 'mov'"); the reader
    used to zero-extend it, claiming high bits the kernel never set."""
    text = (".version 8.8\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
            ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nmov.u32 %r1, 5;\nmov.b64 %rd1, {%r1};\n"
            "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%f1}, %rd1, %rd1, 0, 1, 1, 0, 0;\n}\n")
    (site,) = analysis.analyse(text).sites
    assert site.operands["a"].word.known == 0


def test_many_negations_of_a_predicate_are_read_without_recursion():
    module = source.parse(TCGEN05)
    machine = evaluate.Machine(evaluate.Context(module, module.functions[0]))
    machine.env["%p1"] = evaluate.bits.const(1, 1)
    assert machine.read("!" * 100_001 + "%p1", 1) == evaluate.bits.const(0, 1)
    assert machine.read("!" * 100_000 + "%p1", 1) == evaluate.bits.const(1, 1)


def test_a_layout_of_more_k_slices_than_any_shared_memory_holds_is_refused(capsys, monkeypatch):
    """`ptx check` looks at each K slice of the tile for the one a descriptor starts; a K of 2^40 elements
    used to exhaust memory (exit 3)."""
    rc, out, err = run(capsys, monkeypatch, (FIXTURES / "handwritten_wgmma.ptx").read_text(), "check",
                       "--layout", "A=(64,1099511627776):(1,64)")
    assert rc == 2 and out == "" and err.count("\n") == 1 and "K slices" in err


def test_a_layout_with_a_mode_of_2_30_inner_elements_is_read_64_rows_at_a_time(capsys, monkeypatch):
    """The M mode ((2 x 30 digits), 64): only the rows an MMA reads are expanded (it exhausted memory)."""
    twos = ",".join(["2"] * 30)
    strides = ",".join(str(1 << (i + 6)) for i in range(30))
    rc, out, err = run(capsys, monkeypatch, (FIXTURES / "triton_wgmma_f16_sw128.ptx").read_text(), "check",
                       "--layout", f"A=(({twos}),64):(({strides}),1)", "--json")
    assert rc in (0, 1) and err == ""
    assert json.loads(out)["summary"]["unknown"] == 0


MMA_MODIFIERS = ["sync", "aligned", "m64n64k16", "m64n0k16", "m64n256k8", "f32", "f16", "bf16", "e4m3", "s8", "tf32",
                 "sp", "ws", "cta_group::2", "kind::f16", "kind::tf32", "kind::f8f6f4", "kind::i8", "kind::mxf8f6f4",
                 "kind::mxf4", "kind::nothing", "block_scale", "collector::a::fill"]
MMA_OPERANDS = ["%rd1", "%rd2", "[%r1]", "%r3", "0x08110490", "0x04100010", "0x10200490", "0x080004a0", "0",
                "-1", "{%f1, %f2}", "%p1", "!%p1", "0x4000404000010040", "0xffffffffffffffff", "0x60004040",
                "smem", "smem+16", "[%r1+4]", "0xffffffff"]


@pytest.mark.parametrize("seed", range(4))
def test_random_mma_statements_never_end_in_an_internal_error(capsys, monkeypatch, seed):
    """Whatever modifiers and operands an MMA statement has: exit 0 or 1, or 2 with one line."""
    rng = random.Random(seed)
    for _ in range(40):
        family = rng.choice(["wgmma.mma_async", "tcgen05.mma.cta_group::1"])
        statements = [family + "".join("." + m for m in rng.sample(MMA_MODIFIERS, rng.randint(0, 5))) + " "
                      + ", ".join(rng.choice(MMA_OPERANDS) for _ in range(rng.randint(3, 9))) + ";"
                      for _ in range(rng.randint(1, 3))]
        text = (f".version 8.8\n.target {rng.choice(['sm_90a', 'sm_100a', 'sm_103a'])}\n.address_size 64\n"
                ".shared .align 1024 .b8 smem[8192];\n.visible .entry k()\n{\n.reg .b64 %rd<4>;\n.reg .b32 %r<4>;\n"
                "mov.b64 %rd1, 0x4000404000010040;\nmov.b64 %rd2, 0x4000404000010440;\nmov.u32 %r3, 0x08110490;\n"
                + "\n".join(statements) + "\nret;\n}\n")
        for argv in (("descriptors",), ("check", "--layout", "A=Sw<3,4,3> o (256,64):(64,1)"),
                     ("check", "--layout", "B=(256,128):(1,256)@0x2400")):
            rc, out, err = run(capsys, monkeypatch, text, *argv)
            assert rc in (0, 1, 2) and (rc != 2 or err.count("\n") == 1), (text, argv, err)


# --- the walk's structures against brute force ----------------------------------------------------------------
def _random_items(rng: random.Random, size: int) -> list:
    """(statement, instruction) pairs of a random function: labels, branches back and forth, writes."""
    from solver.kernel.frontend.instruction import parse_instruction
    from solver.kernel.frontend.source import Statement
    labels = [f"L{k}" for k in range(max(1, size // 6))]
    items = []
    for line in range(size):
        roll = rng.random()
        if roll < 0.2:
            items.append((Statement(line, "", rng.choice(labels)), None))
        elif roll < 0.5:
            text = f"@%p1 bra {rng.choice(labels)}"
            items.append((Statement(line, text), parse_instruction(line, text)))
        else:
            text = f"add.u32 %r{rng.randrange(6)}, %r1, 1"
            items.append((Statement(line, text), parse_instruction(line, text)))
    return items


@pytest.mark.parametrize("seed", range(20))
def test_the_loops_a_branch_leaves_and_what_they_write_match_brute_force(seed):
    rng = random.Random(seed)
    items = _random_items(rng, rng.randrange(1, 80))
    loops = evaluate.find_loops(items)
    labels = evaluate._labels(items)
    writes = evaluate.Writes(items)
    entered = evaluate.LoopsEntered(loops, len(items))
    for i, (_, ins) in enumerate(items):
        entered.reach(i)
        containing = [loop for loop in loops if loop.header <= i <= loop.back_branch]
        assert entered.containing(i) == (max(containing, key=lambda loop: loop.back_branch) if containing else None)
        target = evaluate._branch_target(ins) if ins is not None else None
        if target in labels and labels[target] > i:
            left = [loop for loop in loops if loop.header <= i <= loop.back_branch < labels[target]]
            expected = (min(l.header for l in left), max(l.back_branch for l in left)) if left else None
            assert entered.left(i, labels[target]) == expected
    for first in range(len(items)):
        written = set()
        for last in range(first, len(items)):
            if items[last][1] is not None:
                written.update(evaluate.destinations(items[last][1]))
            assert {f"%r{k}" for k in range(6) if writes.between(f"%r{k}", first, last)} == written


# --- past the work bound: less known, never something else --------------------------------------------------------
def _random_kernel(rng: random.Random) -> str:
    r = lambda: f"%r{rng.randint(1, 8)}"
    body = []
    labels = [f"L{k}" for k in range(rng.randint(1, 4))]
    for _ in range(rng.randint(5, 40)):
        guard = rng.choice(["", "", "@%p1 ", "@!%p2 "])
        body.append(rng.choice([
            f"{guard}mov.u32 {r()}, {rng.choice([0, 16, 65536, 1073758272, 'smem'])};",
            f"{guard}add.u32 {r()}, {r()}, 16;", f"{guard}shr.u32 {r()}, {r()}, 4;",
            f"{guard}or.b32 {r()}, {r()}, {r()};", f"setp.ne.u32 %p{rng.randint(1, 2)}, {r()}, 0;",
            f"{guard}mov.b64 %rd{rng.randint(1, 2)}, {{{r()}, {r()}}};", f"{guard}bra {rng.choice(labels)};",
            f"{rng.choice(labels)}:",
            "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, 0x08110490, %p1;"]))
    lines, placed = [], set()
    for line in body:                      # each label once
        if line.endswith(":"):
            if line in placed:
                continue
            placed.add(line)
        lines.append(line)
    lines += [f"{label}:" for label in labels if f"{label}:" not in placed]
    return (".version 8.8\n.target sm_100a\n.address_size 64\n.shared .align 1024 .b8 smem[4096];\n"
            ".visible .entry k()\n{\n.reg .pred %p<3>;\n.reg .b32 %r<9>;\n.reg .b64 %rd<3>;\n"
            + "\n".join(lines) + "\nret;\n}\n")


def _words(text: str) -> list:
    return [(site.line, role, op.word) for site in analysis.analyse(text).sites
            for role, op in site.operands.items() if op.word is not None]


@pytest.mark.parametrize("seed", range(10))
def test_a_bounded_walk_knows_a_subset_of_what_an_unbounded_one_knows(seed, monkeypatch):
    """With no work allowed, every bit still known is known, and the same, with all the work it needs."""
    rng = random.Random(seed)
    for _ in range(20):
        text = _random_kernel(rng)
        unbounded = _words(text)
        monkeypatch.setattr(evaluate, "WORK_FLOOR", 0)
        monkeypatch.setattr(evaluate, "WORK_PER_STATEMENT", 0)
        bounded = _words(text)
        monkeypatch.undo()
        for (line, role, full), (_, _, partial) in zip(unbounded, bounded, strict=True):
            assert partial.known & ~full.known == 0, (line, role)
            assert (partial.value ^ full.value) & partial.known == 0, (line, role)


def test_a_site_past_the_work_bound_says_so(capsys, monkeypatch):
    """Branches over many known registers spend the bound; the MMA after them reads a descriptor built
    before them, now unknown, and its reason names where the bound was reached."""
    movs = "".join(f"\tmov.u32 %r{i}, {i};\n" for i in range(100, 400))
    branches = "\t@%p1 bra DONE;\n" * 300
    text = TCGEN05.replace("\tmov.b32 \t%r20, 0x08110490;\n", "\tmov.b32 \t%r20, 0x08110490;\n" + movs + branches
                           + "DONE:\n", 1).replace(".reg .b32 \t%r<32>;", ".reg .b32 \t%r<400>;", 1)
    monkeypatch.setattr(evaluate, "WORK_FLOOR", 1000)
    rc, document = descriptors(capsys, monkeypatch, text, "--kernel", "one_cta")
    first = document["sites"][0]
    assert not first["operands"]["a"]["known"]
    assert "work bound" in first["operands"]["a"]["no_addresses"]
    monkeypatch.undo()
    rc, document = descriptors(capsys, monkeypatch, text, "--kernel", "one_cta")
    assert document["sites"][0]["operands"]["a"]["known"]
