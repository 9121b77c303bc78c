"""The fast PTX reader (solver/fast/kernel_frontend_grammar.py, the optimised path) against its reference,
grammar.parse_with_grammar (ptx.lark read by lark): the same syntax tree, dataclass equal as a whole
(functions, bodies, nested blocks, lines, texts, operands, guards, declarations, unread), on every PTX
fixture, with the fast path (not the fallback) taken on every compiler kernel of the corpus and the
held-out set. Then grammar.parse (fast path or fallback) against the reference, the same tree or the same
error (a SpecError and its message): every statement form after every other (the grammar's lexer depends
on what came before), statements at the edge of what the scanner reads, the runaway files of issue 25,
seeded mutations of corpus statements and seeded random statements. Speed is measured apart (see the
report's command), never asserted here.
"""
from __future__ import annotations

import glob
from repo_paths import TESTS  # noqa: E402  (tests/repo_paths.py)
import itertools
import lzma
import random
import re
from functools import lru_cache
from pathlib import Path

import pytest

import ptx_runaways
from spec import fast as fast_paths
from spec.rule import SpecError
from solver.fast import kernel_frontend_grammar as fast_reader
from solver.kernel.frontend import grammar, syntax

FIXTURES = TESTS / "fixtures" / "ptx"
PLAIN = sorted(glob.glob(str(FIXTURES / "*.ptx")))
CORPUS = sorted(glob.glob(str(FIXTURES / "corpus" / "*" / "*.ptx.xz")))
HELDOUT = sorted(glob.glob(str(FIXTURES / "heldout" / "*.ptx.xz")))
HEADER = ".version 8.8\n.target sm_100a\n.address_size 64\n"


def fast_read(text: str):
    """The fast path alone: the tree, or None where it declines."""
    return fast_reader.read(text, grammar._parser(), grammar._module)


def read_text(path: str) -> str:
    return lzma.open(path, "rt").read() if path.endswith(".xz") else Path(path).read_text()


def kernel(body: str) -> str:
    return HEADER + ".visible .entry k(\n\t.param .u64 k_param_0\n)\n.reqntid 128, 1, 1\n{\n" + body + "\n}\n"


def outcome(read, text: str):
    """The tree, or the error raised (its type and message)."""
    try:
        return read(text)
    except Exception as error:          # SpecError, and whatever else the reference raises on this text
        return type(error).__name__, str(error)


def ids(paths) -> list:
    return [str(Path(p).relative_to(FIXTURES)) for p in paths]


# --- every fixture --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", PLAIN + CORPUS + HELDOUT, ids=ids(PLAIN + CORPUS + HELDOUT))
def test_the_fast_reader_gives_the_grammars_tree(path):
    text = read_text(path)
    fast, reference = fast_read(text), grammar.parse_with_grammar(text)
    assert fast is None or fast == reference
    assert grammar.parse(text) == reference
    if path in CORPUS or path in HELDOUT:            # compilers' kernels: read by the fast path, not the fallback
        assert fast is not None


def read_apart(text: str):
    """The bodies read one by one (fast_reader.parse_apart, as analyse(jobs=N) reads them): (each body,
    the whole tree), or None where it declines the module's structure."""
    parts = fast_reader.parse_apart(text)
    if parts is None:
        return None
    return [parts.body(k) for k in range(len(parts.functions))], parts.whole()


def check_apart(text: str) -> None:
    """Each body read apart is the grammar's, and the whole tree is the grammar's, wherever the fast path
    vouches for them (declining is always right: the compilers' kernels, below, are not declined)."""
    apart, fast = read_apart(text), fast_read(text)
    if apart is None or apart[1] is None:
        return
    bodies, whole = apart
    reference = grammar.parse_with_grammar(text)
    assert whole == reference and fast == reference
    assert bodies == [f.body for f in reference.functions if f.body is not None]


@pytest.mark.parametrize("path", PLAIN + CORPUS + HELDOUT, ids=ids(PLAIN + CORPUS + HELDOUT))
def test_the_bodies_read_apart_are_the_grammars(path):
    text = read_text(path)
    check_apart(text)
    if path in CORPUS or path in HELDOUT:            # compilers' kernels: read apart, not declined
        assert read_apart(text) is not None and read_apart(text)[1] is not None
    with fast_paths.references_only():                # the reference reads no body apart
        assert grammar.parse_bodies_apart(text) is None


def test_a_body_whose_braces_end_elsewhere_than_its_reading_is_declined():
    """A brace in a comment inside a statement: body_end skips the comment, the scanner declines the
    statement, and the body is declined (None), not read short; a brace in a string of .pragma is skipped
    by both."""
    declined = kernel("\tadd.s32 %r1, /* } */ %r2, 1;\n\tret;\n")
    parts = fast_reader.parse_apart(declined)
    assert parts is not None and parts.body(0) is None and parts.whole() is None
    assert fast_read(declined) is None
    read = kernel('\t.pragma "}{";\n\tret;\n')
    check_apart(read)
    assert read_apart(read)[1] is not None


ENDS = {   # a body's end, found by body_end's count of braces or by its scan, against where reading ends
    "a scope closed at a line start, as nvcc pastes inline asm": kernel("{\n.reg .pred p;\n}\n\tret;\n"),
    "a brace in a comment": kernel("\t// a } in a comment\n\tret;\n"),
    "a brace in a block comment": kernel("/*\n}\n*/\n\tret;\n"),
    "a brace in a string": kernel('\t.pragma "}";\n\tret;\n'),
    "a body closed inside a line, the next at a line start":
        kernel("\tret;")[:-3] + "}\n" + kernel("\tret;")[len(HEADER):].replace(".entry k(", ".entry k2("),
}


@pytest.mark.parametrize("name", sorted(ENDS))
def test_a_body_ends_where_its_reading_ends(name):
    """Each body's end, found without reading it, is where read_body ends; where the count of braces is
    fooled (a body closed inside a line, then one closed at a line start), the body is declined, never
    read short or long, and the module is read whole."""
    text = ENDS[name]
    check_apart(text)
    parts = fast_reader.parse_apart(text)
    assert parts is not None
    forms = fast_reader.forms_of(grammar._parser())
    reading = [end for _, end, part in fast_reader.regions(text, forms) if isinstance(part, syntax.Block)]
    ends = [place.closed for place in parts.places]
    if name.startswith("a body closed inside a line"):
        assert ends != reading and parts.whole() is None
    else:
        assert ends == reading and parts.whole() == grammar.parse_with_grammar(text)


def test_the_fast_path_reads_the_bodies_and_the_grammar_the_module():
    """One kernel of each compiler: a fast tree has every body the scanner read, in place of the
    placeholders the grammar read (none is left), and its module declarations (initializer lists put back)."""
    for compiler in ("triton", "cutlass", "cutedsl", "tilelang"):
        path = next(p for p in CORPUS if f"/{compiler}/" in p)
        tree = fast_read(read_text(path))
        assert tree is not None and tree.functions and tree.unread == []
        shown = repr(tree)
        assert fast_reader.PLACEHOLDER not in shown


# --- statements one after another: the grammar's lexer depends on what came before ----------------------------
STATEMENTS = {
    "label": "L1:",
    "instruction": "add.s32 %r1, %r2, -4;",
    "guarded": "@!%p1 bra $L__BB0_2;",
    "vector": "ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%r5+16];",
    "pair": "elect.sync %r1|%p2, -1;",
    "tensor": "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group .L2::cache_hint [%rd1, {%r1, %r2}], [%r3], %rd2;",
    "call": "call.uni \n\t__assertfail, \n\t(\n\tparam0, \n\tparam1\n\t);",
    "reg": ".reg .b32 %r<10>;",
    "shared": ".shared .align 16 .b8 smem[1024];",
    "local": ".local .align 8 .b8 __local_depot0[16];",
    "param": ".param .b64 param0;",
    "loc": ".loc\t1 25 0",
    "loc_inlined": ".loc 1 25 0, function_name $L__info_string0, inlined_at 1 10 5",
    "loc_operand": ".loc 1 25 0, function_name $L__info_string0",
    "pragma": '.pragma "nounroll";',
    "branchtargets": ".branchtargets\n\t\t$L__BB0_7,\n\t\t$L__BB0_11;",
    "open": "{",
    "close": "}",
    "block": "{ .reg .pred P1; setp.ne.b32 P1, %r1, 0; @P1 bra DONE; DONE: }",
    "comment": "// a comment /* { */",
    "block_comment": "/* a { comment\n } */",
}


@pytest.mark.parametrize("first, second", list(itertools.product(STATEMENTS, repeat=2)),
                         ids=[f"{a}-{b}" for a, b in itertools.product(STATEMENTS, repeat=2)])
def test_every_statement_after_every_other(first, second):
    text = kernel("\t" + STATEMENTS[first] + "\n\t" + STATEMENTS[second] + "\n")
    assert outcome(grammar.parse, text) == outcome(grammar.parse_with_grammar, text)


def test_a_declaration_after_a_label_or_a_pragma_is_the_grammars_unread():
    """After a label or a .pragma the grammar's lexer reads `.reg` as a DIRECTIVE (the parser states are
    shared with .section items and function directives) and the grammar does not read the declaration:
    the fast reader declines, and the unread statement is the grammar's."""
    for before in ("L1:", '.pragma "nounroll";', ".loc 1 2 3, function_name L"):
        text = kernel(f"\t{before}\n\t.reg .b32 r;\n\tret;\n")
        assert fast_read(text) is None
        tree = grammar.parse(text)
        assert tree == grammar.parse_with_grammar(text) and len(tree.unread) == 1


def test_what_the_fast_reader_writes_is_what_the_grammar_writes():
    text = kernel("\t@ ! %p1\n\tcp.async.bulk.tensor.1d.global.shared::cta.bulk_group  .L2::cache_hint\n"
                  "\t\t[ %rd1 ,{ %r1 ,%r2 } ] , [%r3 + 16], { }, %rd2 ;\n"
                  "\tmov.b32 %r1, 0f3F800000;\n\tsetp.ne.s32 %p1|%p2, - %r1 << 2, 0x10U;\n"
                  "\t.reg .v4 .b32 abcd, %rs<4>, x[2][];\n\tmov.s32 abcd.y, %r1;\n")
    tree = fast_read(text)
    assert tree is not None and tree == grammar.parse_with_grammar(text)
    first, _, second, declaration, component = tree.functions[0].body.items
    assert first.line == 10 and first.instruction.line == 10                 # the opcode's line, not the guard's
    assert first.text == ("@!%p1 cp.async.bulk.tensor.1d.global.shared::cta.bulk_group.L2::cache_hint "
                          "[%rd1, {%r1, %r2}], [%r3+16], {}, %rd2")
    assert (first.instruction.guard, first.instruction.guard_negated) == ("%p1", True)
    assert second.instruction.operands == ("%p1|%p2", "-%r1<<2", "0x10U")
    assert declaration.text == ".reg .v4 .b32 abcd, %rs<4>, x[2][]"
    assert [d.count for d in declaration.declarators] == [None, 4, None]
    assert component.instruction.operands == ("abcd.y", "%r1")


def test_a_module_with_sections_and_initializers_keeps_them():
    """Debug sections are left out of the text the grammar reads (they are no part of the tree); a list
    of integers initializing a module variable is written back into its declaration."""
    text = (HEADER + ".global .align 1 .b8 msg[3] = {104,  105 ,0};\n"
            + kernel("\tret;\n")[len(HEADER):]
            + ".section .debug_str\n{\n$L__info_string0:\n.b8 95 // _\n.b8 0,1\n.b32 .debug_abbrev\n}\n")
    tree = fast_read(text)
    assert tree is not None and tree == grammar.parse_with_grammar(text)
    assert tree.declarations[0].text == ".global .align 1 .b8 msg[3] = {104, 105, 0}"


def test_text_that_names_a_placeholder_is_the_grammars():
    text = kernel(f"\t{fast_reader.BODY}0:\n\tret;\n")
    assert fast_read(text) is None and grammar.parse(text) == grammar.parse_with_grammar(text)


# Statements at the edge of what the scanner reads (it reads some, declines the others), and modules
# around the bodies: comments and strings holding braces, initializers, sections, misplaced braces.
EDGE_BODIES = [
    "mov.u32 %r\u00e9, 1;", ".reg .b32 %r\u00e9;", "mov.u32 %r1, \u00b2;", 'mov.u32 %r1, 1;\r\n\tret;\r\n',
    'mov.u32\x0c%r1,\x0c1;', 'mov.f32 %f1, 1.;', 'mov.f32 %f1, 1e5;', 'mov.f64 %fd1, 0d3FF0000000000000;',
    'mov.u32 %r1, 09;', 'mov.u32 %r1, 0b101;', 'mov.u32 %r1, 017;', 'mov.u32 %r1, 1.5e+3;',
    'mov.u32 %r1, 0f3F80000;', '.loc 1 2 3, a b+1, c 1 2 3', '.loc 1 2 3 , a 1 2 3', '.loc 1 2 3,a 1 2 3',
    '.loc 1 2 3, a 1, b 2 3 4', '.loc 1 2 3\n, a 1 2 3', '.loc 1 2 3 mov.u32 %r1, 1;', '.loc 1 2', '.loc 1 2 3 4',
    '.loc 01 2 3', '.reg .b32 %r<0>;', '.reg .b32 %r< 5 >;', '.shared .align 0x10 .b8 x[0x10];', '.reg .b32 a,b;',
    '.reg.b32 x;', '.reg .b32 %r<010>;', '.reg .b32 %r<5u>;', '.reg .b32 x = 1;', '.reg .align .b32 x;',
    '.reg .b32 x[ ];', '.reg .b32 %r<5>[2];', '.reg .pred;', 'L :', 'L\t:', 'L::', '%L:', 'L\n:',
    '$L__BB0_1: ret;', '@%p1.x bra L;', '@p.a bra L;', '@!p bra L;', '@ p bra L;', '@p\nbra L;', '@p bra.uni L;',
    '@p1bra L;', '@%p1 L: ret;', 'ret', 'ret ;', ';', 'mov.u32 %r1, %r2 ;', 'mov.u32%r1, 1;', 'mov.u32 %r1 , 1 ;',
    'bar.sync 0 ;', 'ld.global.v2.f32 {%f1, %f2}, [%rd1+-8];', 'st.shared.u32 [%r1 + -4], %r2;',
    'add.s32 %r1, %r2, !%r3;', 'add.s32 %r1, %r2, ~ %r3;', 'mov.u32 %r1, a*b;', 'mov.u32 %r1, a/b;',
    'mov.u32 %r1, a&b^c;', 'mov.u32 %r1, (a);', 'mov.u32 %r1, [a, b];', 'mov.u32 %r1, [a|b];',
    'mov.u32 %r1|%p1|%p2, 1;', 'mov.u32 {}, 1;', 'mov.u32 {%r1,}, 1;', 'call (a), f, ();', 'call f, (a, b);',
    'mov.u32 %r1, -(a);', 'mov.u32 %r1, [a]+4;', 'mov.u32 %r1, {a}+4;',
    'tcgen05.ld.sync.aligned.32x32b.x2.b32{%r1, %r2}, [%r3];', 'mov.u32 %r1, 1; // c { \n',
    'mov.u32 /* c */ %r1, 1;', '/* c */ mov.u32 %r1, 1;', '/* unclosed', '// c', '.pragma "a", "b";',
    '.pragma "a"', '.pragma"a";', '.pragma "a\\"b";', ".pragma 'a';", '.branchtargets a;',
    '.branchtargets a, b ,c;', '.calltargets f;', '.branchtargets;', '.callprototype _ (.param .b32 _);', '{',
    '}', '{ }', '{ { } }', '{ L: }', 'L: { }', 'L: .loc 1 2 3', 'L: .pragma "x";', 'L: .branchtargets a;',
    '.pragma "x"; .loc 1 2 3', '.pragma "x"; L:', '.pragma "x"; { .reg .b32 r; }', '.pragma "x"; .pragma "y";',
    'mov.u32 .x %r1, 1;', 'mov.u32 .align %r1, 1;', 'mov.u32 .loc %r1, 1;', 'mov.u32.x.y %r1, 1;',
    'mov.u32 .x.y %r1, 1;', 'mov.u32 .x$ %r1, 1;', 'mov.u32 .x::y %r1, 1;', 'mov.u32 .x:: %r1, 1;',
    'Mov.u32 %r1, 1;', '_mov %r1;', 'mov.U32 %r1, 1;', 'mov.u32 %r1, %tid.x;', 'mov.u32 %r1, %tid.xy;',
    'mov.u32 %r1, %tid .x;', 'mov.u32 %r1, a.b;', 'mov.u32 %r1, $;', 'mov.u32 %r1, %;', 'mov.u32 %r1, 1 2;',
    'mov.u32 %r1, , 2;', 'mov.u32 %r1, 2,;', 'mov.u32 %r1, <<2;', 'mov.u32 %r1, 2<<;', 'mov.u32 %r1, 2 < 3;',
    'mov.u32 %r1, "s";', '.local .b8 d[4] ;', '.param .align 8 .b8 p[16];', '.global .b8 g[4];',
    '.const .b8 c[4];', '.tex .u64 t;', '.sreg .b32 s;', '.shared .v2 .b32 sv[4], sw;', '.reg .b32 r,\n r2;',
    '.reg .b32\n%r<4>;',
]
EDGE_MODULES = [
    HEADER + ".visible .entry k() .pragma \"nounroll\"; { ret; }\n",
    HEADER + ".func (.reg .b32 r) f (.reg .b32 a) { mov.u32 r, a; ret; }\n.visible .entry k() { ret; }\n",
    HEADER + ".extern .func f (.param .b32 a);\n.visible .entry k() { call f, (1); ret; }\n",
    HEADER + "// .entry fake {\n.visible .entry k() { ret; }\n",
    HEADER + ".global .b8 x[2] = {1, -2};\n.visible .entry k() { ret; }\n",
    HEADER + ".global .b8 x[2] = {1, /* c */ 2};\n.visible .entry k() { ret; }\n",
    HEADER + ".global .b8 x[2][2] = {{1, 2}, {3, 4}};\n.visible .entry k() { ret; }\n",
    HEADER + ".global .b8 x[2] = {1, 2}, y[1] = {3};\n.visible .entry k() { ret; }\n",
    HEADER + ".global .b8 x[2] = {1, 2};\n.global .b8 y[2] = {3, 4};\n.visible .entry k() { ret; }\n",
    HEADER + ".global .b8 x[2] = {};\n.visible .entry k() { ret; }\n",
    HEADER + ".global .func x = {1};\n.visible .entry k() { ret; }\n",
    HEADER + ".visible .entry k() { ret; }\n.section .debug_str { .b8 \"s\" }\n",
    HEADER + ".visible .entry k() { ret; }\n.section .debug_str { .b8 1 .b8 2, .x L: L2: .b64 a-b }\n",
    HEADER + ".visible .entry k() { ret; }\n.section .debug_str { .b8 }\n",
    HEADER + ".visible .entry k() { ret; }\n.section .debug_str { .b8 1 2 }\n",
    HEADER + ".visible .entry k() { ret; }\n.section .debug_str { L }\n",
    HEADER + ".visible .entry k() .section .x { ret; }\n",
    HEADER + ".visible .entry k() .maxntid 1 .section .x { ret; }\n",
    HEADER + ".visible .entry k() { ret; }\n.visible .entry k() {\n}\n",
    HEADER + ".visible .entry k() { ret; } .visible .entry j() { { } }",
    HEADER + ".visible .entry k() { ret; ",
    HEADER + ".visible .entry k() { ret; }}",
    HEADER + ".visible .entry k() {{ ret; }",
    HEADER + ".visible .entry k();\n.visible .entry j() { ret; }\n",
    HEADER + ".entry k() { ret; }\n.file 1 \"a{b\"\n",
    HEADER + ".file 1 \"a{b\n.entry k() { ret; }\n",
    HEADER + ".entry k() { $__fast_reader_body_0: }\n",
    HEADER + ".global .b8 x[1] = {$__fast_reader_list_0};\n.entry k() { ret; }\n",
    HEADER + ".entry k()\n{\n\tret;\n}\n.global .b8 msg[3] = {104,\n 105 ,\n0};\n.entry j() { ret; }\n",
]


@pytest.mark.parametrize("text", [kernel("\t" + body + "\n") for body in EDGE_BODIES] + EDGE_MODULES)
def test_edges_read_as_the_grammar_reads_them(text):
    fast, expected = fast_read(text), outcome(grammar.parse_with_grammar, text)
    assert fast is None or fast == expected
    assert outcome(grammar.parse, text) == expected
    check_apart(text)


@pytest.mark.parametrize("name", sorted(ptx_runaways.GENERATORS))
def test_the_runaway_files_read_the_same(name):
    """The small files that ran away before issue 25 (tests/ptx_runaways.py), at small sizes."""
    for n in (1, 9):
        text = ptx_runaways.GENERATORS[name](n)
        assert outcome(grammar.parse, text) == outcome(grammar.parse_with_grammar, text)
        check_apart(text)


# --- mutated statements ------------------------------------------------------------------------------------------
ODD = ["@", "%", ",", ";", "{", "}", "[", "]", "(", ")", ".x", "::", ":", '"s"', "/* c */", "// c\n", "0x", "1.5e",
       "!", "-", "|", "<<", "=", ".reg", ".align", "$", "\\", "'", "\u00e9", "\v", "09", "<010>", ".loc 1 2",
       "\n", "@%p1", ".pragma", "0f3F80", "+", "*", "/"]
APART = [" .bulk_group", " .L2::cache_hint", " .bulk_group .L2::cache_hint", " .x", " .align 8"]
REGISTER = re.compile(r"%([a-z]+[0-9]+)")


@lru_cache(maxsize=1)
def corpus_lines() -> tuple:
    """The body lines of every corpus kernel (from each first function body on)."""
    found = []
    for path in CORPUS:
        lines = read_text(path).split("\n")
        start = next(i for i, line in enumerate(lines) if line.strip() == "{")
        found.append(lines[start + 1:])
    return tuple(found)


def window(rng: random.Random) -> list:
    lines = rng.choice(corpus_lines())
    at = rng.randrange(max(1, len(lines) - 16))
    return lines[at:at + rng.randint(3, 14)]


def mutate(rng: random.Random, lines: list) -> str:
    """One of the mutations, at a random place of a window of corpus lines."""
    lines = list(lines)
    i = rng.randrange(len(lines))
    line = lines[i]
    kind = rng.randrange(11)
    if kind == 0 and ";" in line:                                  # drop a ';'
        lines[i] = line.replace(";", "", 1)
    elif kind == 1:                                               # an odd token somewhere
        at = rng.randrange(len(line) + 1)
        lines[i] = line[:at] + rng.choice(ODD) + line[at:]
    elif kind == 2:                                               # spaces around operators and brackets
        lines[i] = re.sub(r"([-+|,\[\]{}()<>])", lambda m: rng.choice([" ", "\t", "\n", ""]) + m.group(1) + " ", line)
    elif kind == 3:                                               # registers named without %
        lines[i] = REGISTER.sub(r"\1", line)
    elif kind == 4:                                               # a guard on a scoped block's predicate
        found = re.findall(r"\.reg\s+\.pred\s+%?([A-Za-z_$][\w$]*)\s*;", "\n".join(lines))
        predicate = rng.choice(found) if found else "%p1"
        lines[i] = "\t@" + rng.choice(["", "!", " ! "]) + predicate + " " + line.lstrip()
    elif kind == 5:                                               # modifiers written apart from the opcode
        lines[i] = re.sub(r"^(\s*(?:@!?\S+\s+)?[a-z][\w.:]*)", lambda m: m.group(1) + rng.choice(APART), line)
    elif kind == 6:                                               # a comment in an odd place
        at = rng.randrange(len(line) + 1)
        lines[i] = line[:at] + rng.choice(["/* c */", "/*\n*/", "// c\n", "/* ; { } */"]) + line[at:]
    elif kind == 7:                                               # a line break anywhere
        at = rng.randrange(len(line) + 1)
        lines[i] = line[:at] + "\n" + line[at:]
    elif kind == 8:                                               # a character dropped
        at = rng.randrange(max(1, len(line)))
        lines[i] = line[:at] + line[at + 1:]
    elif kind == 9:                                               # a declaration after this line
        lines.insert(i + 1, rng.choice(["\t.reg .b32 q;", "\t.shared .b8 s[4];", "\t.local .align 4 .b8 d[8];"]))
    else:                                                         # a line moved
        lines.insert(rng.randrange(len(lines) + 1), lines.pop(i))
    return "\n".join(lines)


def test_more_statements_unread_than_the_grammar_takes_raise_its_error():
    """A mutated corpus statement repeated past grammar.MAX_UNREAD: where the grammar refuses the file,
    parse raises the same SpecError (the fast path declined); where it reads it, the same tree."""
    rng, refused = random.Random(7), 0
    for _ in range(12):
        line = ""
        while ";" not in line:
            line = mutate(rng, [rng.choice(window(rng))])
        text = kernel((line.strip() + "\n") * (grammar.MAX_UNREAD + 6))
        expected = outcome(grammar.parse_with_grammar, text)
        assert outcome(grammar.parse, text) == expected, text
        refused += isinstance(expected, tuple) and expected[0] == SpecError.__name__
    assert refused > 0


def test_mutated_corpus_statements_read_as_the_grammar_reads_them():
    rng, fast = random.Random(20251128), 0
    cases = 600
    for case in range(cases):
        text = kernel(mutate(rng, window(rng)))
        expected = outcome(grammar.parse_with_grammar, text)
        assert outcome(grammar.parse, text) == expected, (case, text)
        fast += fast_read(text) is not None
    # both paths were exercised: the fast one on the mutations the grammar reads plainly, the fallback
    # on the others (counts, not times)
    assert cases // 5 < fast < cases - cases // 10, fast


# --- random statements ---------------------------------------------------------------------------------------------
SEPARATORS = [" ", " ", " ", "\t", "\n", "", "\r\n", "\f", " /* c */ ", "// c\n", "\v"]
ATOMS = ["%r1", "%rd2", "p", "P1", "_", "%tid.x", "%tid.xy", "a.b", "$L__BB0_1", "1", "0", "0x1F", "0x1FU", "017",
         "09", "1.5", "1.", "1e5", "0f3F800000", "0d3FF0000000000000", "0b101", "%", "$", "abc$d", "1u", "0xg"]
OPERATORS = ["+", "-", "*", "/", "<<", ">>", "&", "^", "|", "%", "<", "!"]
OPCODES = ["mov.u32", "add.s32", "bra", "bra.uni", "ret", "cp.async.bulk.tensor.2d.shared::cta.global", "elect.sync",
           "tcgen05.mma.cta_group::1.kind::f16", "ld.global.L1::evict_last.v4.b32", "Mov", "mov.u32$"]
MODIFIERS = [".bulk_group", ".L2::cache_hint", ".x", ".align", ".loc", "..", "."]
OTHERS = [".loc 1 2 3", ".loc 1 25 0, function_name $L__info_string0, inlined_at 1 10 5", ".loc 1 2 3, f x",
          '.pragma "nounroll";', '.pragma "a", "b";', ".branchtargets L1, L2;", ".calltargets f;", "L1:", "L2 :",
          "$L__x:", "{", "}", "// c", "/* c */", ";", "L1::"]


class RandomStatements:
    """Statements drawn from the forms the scanner reads and their near misses, odd separators between
    their tokens."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def space(self, plain: float = 0.85) -> str:
        return " " if self.rng.random() < plain else self.rng.choice(SEPARATORS)

    def operand(self, depth: int = 0) -> str:
        rng, draw = self.rng, self.rng.random()
        atom = rng.choice(["", "", "", "-", "!", "~", "- "]) + rng.choice(ATOMS)
        if draw < 0.55 or depth > 2:
            return atom
        if draw < 0.75:
            return atom + self.space(0.5) + rng.choice(OPERATORS) + self.space(0.5) + rng.choice(ATOMS)
        inner = ("," + self.space()).join(self.operand(depth + 1) for _ in range(rng.randint(0, 3)))
        opening = rng.choice("[{(")
        return opening + self.space(0.6) + inner + self.space(0.6) + {"[": "]", "{": "}", "(": ")"}[opening]

    def instruction(self) -> str:
        rng, text = self.rng, ""
        if rng.random() < 0.3:
            text += "@" + rng.choice(["", "!", " ! "]) + rng.choice(["%p1", "p", "P1", "%p1.x", "1"]) + self.space()
        apart = rng.choice([0, 0, 1, 2])
        text += rng.choice(OPCODES) + "".join(self.space() + rng.choice(MODIFIERS) for _ in range(apart))
        count = rng.choice([0, 1, 2, 3, 4])
        if count:
            text += self.space() + ("," + self.space(0.7)).join(self.operand() for _ in range(count))
        return text + self.space(0.7) + rng.choice([";"] * 12 + ["", ",;"])

    def declaration(self) -> str:
        rng = self.rng
        text = rng.choice([".reg", ".shared", ".local", ".param", ".global", ".regx", ".sreg"])
        text += "".join(self.space() + rng.choice([".b32", ".v4", ".align 16", ".align", ".pred", ".align 0x10"])
                        for _ in range(rng.randint(0, 3)))
        names = []
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(["%r", "x", "%rd", "1x", "p"])
            if rng.random() < 0.4:
                name += self.space(0.5) + "<" + self.space(0.8) + rng.choice(["5", "10", "0", "010", "5u"]) + ">"
            name += "".join("[" + rng.choice(["", "4", "0x10", " 4 "]) + "]" for _ in range(rng.choice([0, 0, 1, 2])))
            names.append(name + (" = 1" if rng.random() < 0.05 else ""))
        return text + self.space() + ("," + self.space()).join(names) + self.space(0.7) + rng.choice([";"] * 6 + [""])

    def body(self) -> str:
        statements = []
        for _ in range(self.rng.randint(1, 4)):
            draw = self.rng.random()
            statements.append(self.instruction() if draw < 0.5 else self.declaration() if draw < 0.7
                              else self.rng.choice(OTHERS))
        return "\t" + "\n\t".join(statements)


def test_random_statements_read_as_the_grammar_reads_them():
    statements, fast = RandomStatements(20251129), 0
    cases = 1500
    for case in range(cases):
        text = kernel(statements.body())
        expected = outcome(grammar.parse_with_grammar, text)
        assert outcome(grammar.parse, text) == expected, (case, text)
        fast += fast_read(text) is not None
    assert fast > cases // 20, fast
