"""The PTX reader: ptx.lark (the manual's grammar) parsed LALR(1) into the syntax tree of syntax.py.

Every byte of the file is read by the grammar or reported. A statement the grammar does not read (a
form of PTX it does not know, or text that is not PTX) is cut out, listed in `unread` with its line and
the grammar's reason, and the rest of the file is read again; past MAX_UNREAD such statements the file is
refused (it is then not PTX this reader can vouch for). The cut reaches from the end of the previous
statement (';', '{' or '}') to the next ';' (or the end of its line when that comes first, for the
directives that end at their line).

Lines come from the tokens: every statement records the line of its first token.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache

import lark

from spec import fast
from spec.rule import SpecError

from solver.kernel.frontend import syntax
from solver.kernel.frontend.instruction import Instruction, parse_integer

RULE = ""                  # input errors of the reader name no rule of the catalogue
MAX_UNREAD = 64            # statements the grammar cannot read, before the file is refused
GRAMMAR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ptx.lark")


@lru_cache(maxsize=1)
def _parser():
    with open(GRAMMAR, encoding="utf-8") as handle:
        return lark.Lark(handle.read(), parser="lalr", lexer="contextual", transformer=_Build(),
                         maybe_placeholders=False)


class _Build(lark.Transformer):
    """Grammar rule -> syntax tree node, applied as the parser reduces (no parse tree is kept)."""

    # operands: their text, written the one way the rest of the reader expects (no spaces but after ',')
    def integer(self, c): return str(c[0])
    def float(self, c): return str(c[0])
    def name(self, c): return str(c[0])
    def section_name(self, c): return str(c[0])
    def binary(self, c): return f"{c[0]}{c[1]}{c[2]}"
    def negation(self, c): return f"{c[0]}{c[1]}"
    def pair(self, c): return f"{c[0]}|{c[1]}"
    def address(self, c): return "[" + ", ".join(c) + "]"
    def vector(self, c): return "{" + ", ".join(c) + "}"
    def parenthesised(self, c): return "(" + ", ".join(c) + ")"
    def initializer_list(self, c): return "{" + ", ".join(c) + "}"

    def guard(self, c):
        return (len(c) == 2, str(c[-1]))

    def instruction(self, c):
        guard = c[0] if isinstance(c[0], tuple) else None
        rest = c[1:] if guard else c
        opcode = rest[0]
        modifiers = [m for m in rest[1:] if getattr(m, "type", None) == "DIRECTIVE"]
        operands = tuple(rest[1 + len(modifiers):])
        if modifiers:                     # written apart from the opcode: the same modifiers
            opcode = type(opcode).new_borrow_pos("OPCODE", str(opcode) + "".join(modifiers), opcode)
        prefix = "" if guard is None else f"@{'!' if guard[0] else ''}{guard[1]} "
        text = prefix + str(opcode) + (" " + ", ".join(operands) if operands else "")
        ins = Instruction(opcode.line, text, guard and guard[1], bool(guard and guard[0]), str(opcode), operands)
        return syntax.Statement(opcode.line, text, instruction=ins)

    def label(self, c):
        token = c[0]
        return syntax.Statement(token.line, "", label=str(token).rstrip(":").rstrip(" \t"))

    def align(self, c): return f".align {c[0]}"
    def range(self, c): return f"<{c[0]}>"
    def dimension(self, c): return f"[{c[0]}]" if c else "[]"

    def declarator(self, c):
        name, rest = str(c[0]), c[1:]
        text = name + "".join(p for p in rest if p.startswith(("<", "[")))
        initial = [p for p in rest if not p.startswith(("<", "["))]
        count = int(rest[0][1:-1], 0) if rest and rest[0].startswith("<") and rest[0][1:-1].isdigit() else None
        return syntax.Declarator(name, text + (" = " + initial[0] if initial else ""), count)

    def declaration(self, c):
        space = c[0]
        attributes = [str(a) for a in c[1:] if not isinstance(a, syntax.Declarator)]
        declarators = [d for d in c[1:] if isinstance(d, syntax.Declarator)]
        text = " ".join([str(space)] + attributes) + " " + ", ".join(d.text for d in declarators)
        return syntax.Statement(space.line, text, declarators=tuple(declarators))

    def module_declaration(self, c):
        *linkage, declaration = c
        if not linkage:
            return declaration
        text = " ".join(str(x) for x in linkage) + " " + declaration.text
        return syntax.Statement(linkage[0].line, text, declarators=declaration.declarators)

    def body(self, c):
        return syntax.Block(list(c))

    def parameter(self, c):
        return str([x for x in c if hasattr(x, "type") and x.type == "NAME"][-1])

    def parameters(self, c): return ("parameters", list(c))
    def return_parameters(self, c): return ("returns", list(c))

    def performance_directive(self, c):
        return ("directive", str(c[0]), tuple(parse_integer(str(x)) for x in c[1:]))

    def function(self, c):
        linkage = [x for x in c if getattr(x, "type", None) == "LINKAGE"]
        kind = next(x for x in c if getattr(x, "type", None) == "FUNCTION_KIND")
        name = next(x for x in c if getattr(x, "type", None) == "NAME")
        params = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "parameters"), [])
        directives = {x[1]: x[2] for x in c if isinstance(x, tuple) and x[0] == "directive"}
        body = next((x for x in c if isinstance(x, syntax.Block)), None)
        return syntax.FunctionTree(str(name), str(kind)[1:], (linkage[0] if linkage else kind).line, params,
                                   directives, body)

    def loc(self, c): return syntax.Statement(c[0].line, ".loc " + " ".join(str(x) for x in c))
    def pragma(self, c): return syntax.Statement(c[0].line, ".pragma " + ", ".join(str(x) for x in c))
    def branchtargets(self, c): return syntax.Statement(c[0].line, ".branchtargets " + ", ".join(c))
    def calltargets(self, c): return syntax.Statement(c[0].line, ".calltargets " + ", ".join(c))
    def callprototype(self, c):
        return syntax.Statement(next(x.line for x in c if hasattr(x, "line")), ".callprototype")

    def version(self, c): return ("version", str(c[0]))
    def target(self, c): return ("target", [str(x) for x in c])
    def address_size(self, c): return ("address_size", int(str(c[0])))
    def file(self, c): return ("file", str(c[1]))
    def section(self, c): return ("section", str(c[0]))
    def section_data(self, c): return None

    def start(self, c):
        return list(c)


_STATEMENT_START = re.compile(r"[;{}]")
_LINE_DIRECTIVE = re.compile(r"\s*\.(?:version|target|address_size|file|loc)\b")


def parse(text: str) -> syntax.ModuleTree:
    """The module's tree, and what the grammar could not read (syntax.Unread, in file order):
    parse_with_grammar, the reference; while fast paths are on (spec.fast), the fast reader's
    (solver.fast.kernel_frontend_grammar, the optimised path) where it vouches for the text, else the
    grammar's. tests/solver_tests/kernel/test_kernel_fast_reader.py checks the two."""
    return fast.fastest(parse_with_grammar)(text)


def parse_bodies_apart(text: str):
    """The module read but for its function bodies, each to be read on its own (in the process that
    evaluates it: analysis.analyse with jobs): an object with .tree (the module's tree, each function body
    a placeholder), .functions (the FunctionTrees that have a body, in order), .size(k), .body(k) (body k,
    the Block parse() gives there, or None: declined) and .whole() (the tree parse() gives, or None:
    declined); or None where the module is read whole (then parse()). bodies_apart is the reference;
    while fast paths are on (spec.fast), the fast reader's (solver.fast.kernel_frontend_grammar.parse_apart),
    where it vouches for the module's structure. tests/solver_tests/kernel/test_kernel_fast_reader.py
    checks its bodies and tree against parse_with_grammar."""
    return fast.fastest(bodies_apart)(text)


def bodies_apart(text: str):
    """The reference: None. The grammar reads a module whole (its recovery from a statement it does not
    read re-reads the whole text), so it reads no body apart."""
    return None


def parse_with_grammar(text: str) -> syntax.ModuleTree:
    """The reference: the module's tree read by the grammar alone, and what it could not read."""
    unread = []
    while True:
        try:
            items = _parser().parse(text)
            break
        except lark.exceptions.UnexpectedInput as error:
            if len(unread) >= MAX_UNREAD:
                raise SpecError("ptx", f"line {unread[0].line}",
                                f"more than {MAX_UNREAD} statements the PTX grammar does not read (the first "
                                f"here): not PTX this reader can vouch for", RULE) from None
            begin, end = _statement_around(text, _offset_of(text, error))
            line = text.count("\n", 0, begin) + 1 + _leading_newlines(text, begin, end)
            last = line + text[begin:end].strip().count("\n")
            unread.append(syntax.Unread(line, " ".join(text[begin:end].split())[:200], _reason(error), last))
            text = text[:begin] + _blank(text[begin:end]) + text[end:]
    return _module(items, unread)


def _offset_of(text: str, error) -> int:
    position = getattr(error, "pos_in_stream", None)
    if position is None:
        token = getattr(error, "token", None)
        position = getattr(token, "start_pos", None)
    return len(text) if position is None else min(position, len(text))


def _statement_around(text: str, at: int) -> tuple:
    """[begin, end): the statement holding offset `at`, from after the previous ';', '{' or '}' to its ';'
    (included), or to the end of its line for a line directive, or to the end of the file."""
    begin = _first_token(text, max(text.rfind(c, 0, at) for c in ";{}") + 1, at)
    if _LINE_DIRECTIVE.match(text, begin):
        stop = text.find("\n", at)
        return begin, len(text) if stop < 0 else stop
    stop = text.find(";", at)
    if stop < 0:
        return begin, len(text)
    return begin, stop + 1


_SKIPPED = re.compile(r"\s+|//[^\n]*|/\*.*?\*/", re.S)


def _first_token(text: str, begin: int, at: int) -> int:
    """The start of the statement holding `at`: past the spaces, comments and whole line directives that
    follow the previous statement's end."""
    while begin < at:
        skipped = _SKIPPED.match(text, begin)
        if skipped is not None:
            begin = skipped.end()
            continue
        if _LINE_DIRECTIVE.match(text, begin):
            stop = text.find("\n", begin)
            if 0 <= stop < at:
                begin = stop + 1
                continue
        break
    return min(begin, at)


def _leading_newlines(text: str, begin: int, end: int) -> int:
    chunk = text[begin:end]
    return chunk.count("\n", 0, len(chunk) - len(chunk.lstrip()))


def _blank(chunk: str) -> str:
    """The chunk as spaces, its line breaks kept (the lines after it stay where they were)."""
    return re.sub(r"[^\n]", " ", chunk)


def _reason(error) -> str:
    if isinstance(error, lark.exceptions.UnexpectedCharacters):
        return f"the PTX grammar reads no token starting {error.char!r} here"
    if isinstance(error, lark.exceptions.UnexpectedEOF):
        return "the file ends inside this statement"
    token = getattr(error, "token", None)
    expected = sorted(_terminal_shown(name) for name in (getattr(error, "expected", ()) or ()))
    shown = ", ".join(expected[:6]) + (", ..." if len(expected) > 6 else "")
    return f"the PTX grammar does not expect {str(token)!r} here (expected {shown})"


def _terminal_shown(name: str) -> str:
    """A terminal as the grammar writes it: '.version' for a literal, its name (OPCODE) otherwise."""
    try:
        pattern = _parser().get_terminal(name).pattern
    except KeyError:
        return name
    return repr(pattern.value) if type(pattern).__name__ == "PatternStr" else name


def _module(items: list, unread: list) -> syntax.ModuleTree:
    module = syntax.ModuleTree(unread=unread)
    for item in items:
        if isinstance(item, syntax.FunctionTree):
            module.functions.append(item)
        elif isinstance(item, syntax.Statement):
            module.declarations.append(item)
        elif isinstance(item, tuple) and item[0] == "target":
            module.targets.extend(item[1])
        elif isinstance(item, tuple) and item[0] == "version":
            module.version = item[1]
    return module
