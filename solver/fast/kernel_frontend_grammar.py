"""Fast path of solver/kernel/frontend/grammar.py, the fast PTX reader: the optimised path beside
grammar.parse_with_grammar, its reference (ptx.lark read LALR(1) by lark); grammar.parse dispatches (parse
below is registered against parse_with_grammar). It gives the very same syntax tree (syntax.py), some seven
times faster on the PTX that compilers write (the corpus: about 7 MB/s against 1 MB/s); on anything else it
declines, and the grammar reads the file.

Where the time goes, and the split
----------------------------------
A PTX module is a few directives and declarations around its function bodies, and the bodies are nearly
all of its bytes: statements, one a line. So the grammar stays the reader of the module's structure, and
the bodies are read here:

1. regions() scans the module for each function body, the `{ ... }` after an `.entry` or `.func` header
   (PTX ISA 9.0, 11.2 Specifying Kernel Entry Points and Functions), skipping comments and strings as
   the grammar's lexer skips them (4.2 Comments; strings of .file and .pragma);
2. read_body() reads the body with a hand-written scanner: a precompiled regular expression a statement
   form, built from ptx.lark's own terminals (NAME, LABEL, OPCODE, DIRECTIVE, INT, FLOAT, STRING), so
   both readers cut the same tokens; it builds the Statement, Instruction and Block objects that
   grammar._Build builds, with the same texts, lines and operands;
3. read() has the grammar parse the module with each body replaced by a placeholder, a label of its
   own followed by the body's line breaks (the lines after it stay where they were); the grammar must
   give back one function body holding each placeholder, in order, and the body read takes its place.
   The debug sections (11.5 Debugging Directives, .section: bytes no tree node keeps) and the lists of
   integers that initialize module variables (5.4.4 Initializers: the bytes of assert messages) are the
   rest of a compiler's bytes: when they are plain data they are left out of the text the grammar reads
   too, a list's text written back into its declaration.

What the scanner reads
----------------------
* labels (4.4 Identifiers, `name:`), nested `{ }` blocks (a scope of their own), comments between
  statements;
* instructions `[@[!]p] opcode[ .modifier ...] [operand {, operand}];` (4.3 Statements) whose operands
  are identifiers (registers, `%tid.x`, labels, symbols), integers and floats (4.5.1, 4.5.2), sums and
  products of them with unary `-` `!` `~` (4.5.4 Constant Expressions), a pair `p|q`, an address
  `[a+16]` or `[map, {x, y}]`, a vector `{a, b}` (5.4.2 Vectors) or a list `(a, b)` (call arguments);
* `.reg` `.shared` `.local` `.param` declarations of plain declarators: `name`, `name<N>` (5.4.6
  Parameterized Variable Names), `name[N]` (5.4.3 Array Declarations), no initializer;
* `.loc file line column`, alone or with `, function_name f, inlined_at file line column` on its line;
  `.pragma "...";`; `.branchtargets` and `.calltargets` lists (11.3 Control Flow Directives).

When it declines (read() returns None; parse then asks grammar.parse_with_grammar): a statement of
another form, or with a comment inside it; a statement the grammar does not read (the scanner accepts
only what the grammar's lexer and parser read the same way, so that whatever the grammar lists as unread
is read by the grammar, and reported as before); a module part the grammar does not read; a body the
grammar does not put where regions() guessed. Declining is always right.

Why the tree is the grammar's
-----------------------------
* The text. _Build writes an operand as its tokens side by side, ", " between the items of a list, at
  any nesting (binary, negation, pair, address, vector, list): so an operand the grammar reads is
  written as its characters without white space, with ", " after each comma; modifiers written apart
  join the opcode; a guard is written `@p ` or `@!p `; a declaration is its words one space apart.
* The tokens. The grammar's lexer is contextual: the terminals it tries depend on the parser state, and
  LALR(1) merges states, so some states take more terminals than their statement allows. After a label
  or a `.pragma` (states shared with .section items and function directives) it takes `.reg` for a
  DIRECTIVE, and the grammar refuses the declaration: the scanner declines there. After an operand it
  takes a label or a directive (shared with .loc and .section data): the scanner accepts after an
  operand only a comma, an operator, a closing bracket or ';'.
* The structure. The grammar is context free: a body that derives `_statement*` may be replaced by an
  empty one (a placeholder) without changing whether or how the rest parses, and the tokens on both
  sides of its braces are read in the same states.
* The lines: lark counts '\n'; a statement has the line of the token _Build takes (the opcode for an
  instruction, not its guard; the first integer of .loc; the first string of .pragma; the first name of
  .branchtargets).

tests/solver_tests/kernel/test_kernel_fast_reader.py checks the two equal on every PTX fixture, on every pair of statement
forms and on seeded mutations of corpus statements.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from spec import fast
from solver.kernel import collector
from solver.kernel.frontend import grammar, syntax
from solver.kernel.frontend.instruction import Instruction, split_operands

# Placeholders in the text the grammar reads: a body `{ $__fast_reader_body_<k>: }` (a label, which the
# grammar reads into a Block of one Statement) and a list of integers `= {$__fast_reader_list_<k>}`.
PLACEHOLDER = "$__fast_reader_"
BODY, INTEGERS = PLACEHOLDER + "body_", PLACEHOLDER + "list_"
_LIST_MARK = re.compile(r"\{" + re.escape(INTEGERS) + r"([0-9]+)\}")
SPACES = " \t\f\r\n"                     # ptx.lark's WS (common.WS): no other character is white space
_WITHOUT_SPACES = str.maketrans("", "", SPACES)


# --- the statement forms, from ptx.lark's terminals ---------------------------------------------------------
class Forms:
    """The compiled regular expressions of the statement forms the scanner reads, built from the
    terminals of the grammar's parser (ptx.lark's regular expressions, as its lexer matches them). Every
    repetition is possessive and every token atomic: a token is matched whole, as the lexer matches it,
    and a statement of millions of tokens is matched without backtracking."""

    def __init__(self, parser):
        def terminal(name: str) -> str:
            return parser.get_terminal(name).pattern.to_regexp()

        name, label, opcode = terminal("NAME"), terminal("LABEL"), terminal("OPCODE")
        directive, integer, floating = terminal("DIRECTIVE"), terminal("INT"), terminal("FLOAT")
        string = terminal("STRING")
        ws, ws1, end = rf"[{SPACES}]*+", rf"[{SPACES}]++", rf"(?=[{SPACES};])"
        name, directive, integer = f"(?>{name})", f"(?>{directive})", f"(?>{integer})"
        # 4.5 Constants, 4.5.4 Constant Expressions: an operand is atoms joined by operators (INT and FLOAT
        # never both match at one place, and NAME starts with no digit: the lexer's order among them is moot)
        atom = f"(?>{floating}|{integer}|{name})"
        term = rf"(?:[-!~]{ws})*+{atom}"
        total = rf"{term}(?:{ws}(?:[-+*&^]|<<|>>){ws}{term})*+"       # no '/': '//' opens a comment
        value = rf"{total}(?:{ws}\|{ws}{total})?"                        # p|q (a pair of destinations)
        values = rf"{value}(?:{ws},{ws}{value})*+"
        vector = rf"\{{{ws}(?:{values})?{ws}\}}"
        item = rf"(?>{vector}|{value})"                                 # an address of a tensor: [map, {x, y}]
        operand = rf"(?>\[{ws}{item}(?:{ws},{ws}{item})*+{ws}\]|{vector}|\({ws}(?:{values})?{ws}\)|{value})"
        operands = rf"{operand}(?:{ws},{ws}{operand})*+"
        # 4.3 Statements: [@[!]p] opcode[ .modifier ...] [operands]; (a label first: LABEL, of priority 3,
        # is the lexer's first choice at the start of a statement).
        # An opcode or modifier ends where no character could continue it: white space, ';' or a bracket.
        apart = rf"(?=[{SPACES};{{\[(])"
        self.statement = re.compile(
            rf"({label})|(?:@{ws}(!?){ws}({name}){ws1})?((?>{opcode})){apart}((?:{ws1}{directive}{apart})*+)"
            rf"(?:{ws}({operands}))?{ws};")
        # 5.4 Variables: .space {.attribute | .align N} declarator {, declarator};
        declarator = rf"{name}(?:{ws}<{ws}[1-9][0-9]*+{ws}>)?(?:{ws}\[{ws}{integer}?{ws}\])*+"
        self.declaration = re.compile(
            rf"(\.(?:reg|shared|local|param))(?=[{SPACES}])((?:{ws1}(?:\.align{ws1}{integer}|{directive}){end})*+)"
            rf"{ws1}({declarator}(?:{ws},{ws}{declarator})*+){ws};")
        self.name = re.compile(name)
        # 11.5 Debugging Directives: .loc file line column [, function_name name, inlined_at file line column],
        # on its line (the grammar reads on across lines: what follows then declines, as a statement)
        self.loc = re.compile(rf"\.loc[ \t]++({integer})[ \t]++({integer})[ \t]++({integer})")
        loc_operand = rf"{atom}(?:[-+]{atom})*+(?![ \t]*+[0-9])"
        self.loc_tail = re.compile(
            rf"(?:[ \t]*+,[ \t]*+{name}[ \t]++{loc_operand})*+"
            rf"[ \t]*+,[ \t]*+{name}[ \t]++{integer}[ \t]++{integer}[ \t]++{integer}")
        self.pragma = re.compile(rf"\.pragma{ws1}((?>{string})(?:{ws},{ws}(?>{string}))*+){ws};")
        self.string = re.compile(string)
        self.targets = re.compile(rf"\.(branchtargets|calltargets){ws1}({name}(?:{ws},{ws}{name})*+){ws};")
        # between statements: white space, // and /* */ comments (4.2 Comments)
        skip = rf"(?:[{SPACES}]++|//[^\n]*+|/\*(?:[^*]++|\*++[^*/])*+\*++/)*+"
        self.skip = re.compile(skip)
        # the module around the bodies: what opens, ends or names a statement, outside comments and strings
        self.module_event = re.compile(r'//|/\*|"|[{};=]|\.(?:entry|func|section)(?![\w$])')
        # inside a body whose end is found without reading it (body_end): its braces, comments and strings;
        # and what makes counting its braces wrong (a brace in a // comment, a block comment, a string)
        self.brace_event = re.compile(r'//|/\*|"|[{}]')
        self.brace_hazard = re.compile(r'//[^\n{}]*+[{}]|/\*|"(?:[^"\\\n{}]|\\.)*+[{}]')   # (STRING: one line)
        # 5.4.4 Initializers: `= {1, 2, ...}`, a list of integers (the bytes of a string, say)
        self.integers = re.compile(rf"{ws}\{{({ws}{integer}(?:{ws},{ws}{integer})*+){ws}\}}")
        # 11.5 Debugging Directives: `.section .debug_x {` then labels and items `.bN data {, data}` (ints,
        # names, sections), comments between items; read as far as its '}'
        self.section_head = re.compile(rf"\.section{ws1}{directive}{ws}")
        data = rf"(?>{total}|{directive})"
        self.section_items = re.compile(
            rf"(?:{skip}(?>{label}|{directive}{ws1}{data}(?:{ws},{ws}{data})*+))*+{skip}\}}")


@lru_cache(maxsize=4)
def forms_of(parser) -> Forms:
    """The statement forms of the grammar's parser (compiled once per parser)."""
    return Forms(parser)


# --- the text of a statement, written as _Build writes it ---------------------------------------------------
def operand_texts(written: str) -> tuple:
    """The operands of an instruction the scanner matched, split at the commas outside brackets, each
    without its white space and with ", " between the items of a list (as _Build joins them)."""
    squeezed = written.translate(_WITHOUT_SPACES)
    if "{" in squeezed or "[" in squeezed or "(" in squeezed:
        return tuple(part.replace(",", ", ") for part in split_operands(squeezed))
    return tuple(squeezed.split(","))


def instruction_statement(line: int, negated: Optional[str], guard: Optional[str], opcode: str,
                          modifiers: str, operands: Optional[str]) -> syntax.Statement:
    """grammar._Build.instruction: modifiers written apart join the opcode; the guard is written `@!p `."""
    if modifiers:
        opcode += modifiers.translate(_WITHOUT_SPACES)
    found = operand_texts(operands) if operands else ()
    prefix = "" if guard is None else f"@{'!' if negated else ''}{guard} "
    text = prefix + opcode + (" " + ", ".join(found) if found else "")
    return syntax.Statement(line, text, instruction=Instruction(line, text, guard, bool(negated), opcode, found))


def declaration_statement(line: int, space: str, attributes: str, declarators: str,
                          forms: Forms) -> Optional[syntax.Statement]:
    """grammar._Build.declaration and .declarator; None where the grammar would not read the attributes
    (`.align` not followed by its number)."""
    words = attributes.split()
    if any(word == ".align" and (i + 1 == len(words) or words[i + 1][0] == ".") for i, word in enumerate(words)):
        return None
    found = []
    for written in declarators.split(","):
        text = written.translate(_WITHOUT_SPACES)
        name = forms.name.match(text).group(0)
        count = int(text[text.index("<") + 1:text.index(">")]) if text.startswith("<", len(name)) else None
        found.append(syntax.Declarator(name, text, count))
    text = " ".join([space] + words) + " " + ", ".join(d.text for d in found)
    return syntax.Statement(line, text, declarators=tuple(found))


# --- a function body ----------------------------------------------------------------------------------------
def read_body(text: str, at: int, line: int, forms: Forms) -> Optional[tuple]:
    """(Block, the offset past its closing '}') of the body whose '{' ends just before offset `at`, on
    line `line`; None where a statement is not one the scanner reads (the grammar then reads the file)."""
    skip, statement, size = forms.skip.match, forms.statement.match, len(text)
    items, outer = [], []            # the block being read, and the blocks around it
    directive_next = False           # the grammar's lexer takes '.reg' here for a DIRECTIVE (see the docstring)
    while True:
        end = skip(text, at).end()
        if end != at:
            line += text.count("\n", at, end)
            at = end
        if at >= size:
            return None
        char = text[at]
        if char == "}":
            at += 1
            if not outer:
                return syntax.Block(items), at
            block, items = syntax.Block(items), outer.pop()
            items.append(block)
            directive_next = False
            continue
        if char == "{":
            outer.append(items)
            items, at, directive_next = [], at + 1, False
            continue
        if char == ".":
            found = _directive_statement(text, at, line, directive_next, forms)
            if found is None:
                return None
            item, end, directive_next = found
        else:
            m = statement(text, at)
            if m is None:
                return None
            written_label, negated, guard, opcode, modifiers, operands = m.groups()
            end = m.end()
            if written_label is not None:
                item = syntax.Statement(line, "", label=written_label.rstrip(":").rstrip(" \t"))
                directive_next = True
            else:
                opcode_line = line if guard is None else line + text.count("\n", at, m.start(4))
                item = instruction_statement(opcode_line, negated, guard, opcode, modifiers, operands)
                directive_next = False
        items.append(item)
        line += text.count("\n", at, end)
        at = end


def _directive_statement(text: str, at: int, line: int, directive_next: bool, forms: Forms) -> Optional[tuple]:
    """(Statement, its end, whether the grammar's lexer reads a DIRECTIVE next) of the statement at `at`,
    which starts with '.'; None where the scanner does not read it."""
    m = forms.loc.match(text, at)
    if m is not None:                                       # .loc (11.5)
        numbers, end = list(m.groups()), m.end()
        tail = forms.loc_tail.match(text, end)
        if tail is not None:
            numbers += text[end:tail.end()].replace(",", " ").split()
            end = tail.end()
        return syntax.Statement(line, ".loc " + " ".join(numbers)), end, False
    m = forms.declaration.match(text, at)
    if m is not None:                                       # 5.4 Variables
        if directive_next:
            return None
        item = declaration_statement(line, m.group(1), m.group(2), m.group(3), forms)
        return None if item is None else (item, m.end(), False)
    m = forms.pragma.match(text, at)
    if m is not None:                                       # .pragma (11.4)
        strings = forms.string.findall(m.group(1))
        first = line + text.count("\n", at, m.start(1))
        return syntax.Statement(first, ".pragma " + ", ".join(strings)), m.end(), True
    m = forms.targets.match(text, at)
    if m is not None:                                       # 11.3 Control Flow Directives
        names = m.group(2).translate(_WITHOUT_SPACES).split(",")
        first = line + text.count("\n", at, m.start(2))
        return syntax.Statement(first, f".{m.group(1)} " + ", ".join(names)), m.end(), False
    return None


# --- the module ---------------------------------------------------------------------------------------------
def past_comment_or_string(text: str, token: str, start: int, end: int, forms: Forms) -> Optional[int]:
    """Where the comment or string opened by `token` at `start` ends; None where it is never closed (the
    grammar reports it). `token` is '//', '/*' or '"'."""
    if token == "//":
        stop = text.find("\n", end)
        return len(text) if stop < 0 else stop
    if token == "/*":
        stop = text.find("*/", end)
        return None if stop < 0 else stop + 2
    closed = forms.string.match(text, start)
    return None if closed is None else closed.end()


def section_end(text: str, head: int, opened: int, forms: Forms) -> Optional[int]:
    """The offset past the '}' of the `.section .name {` starting at `head` (its '{' ends at `opened`),
    when its items are all plain data (labels, `.bN 1, 2`, `.b32 .debug_abbrev`, `.b64 $L__x`); else None."""
    if not forms.section_head.fullmatch(text, head, opened - 1):
        return None
    items = forms.section_items.match(text, opened)
    return None if items is None else items.end()


def integer_list(text: str, at: int, forms: Forms) -> Optional[tuple]:
    """(offset past the '{', offset past the '}', the list as _Build writes it) of the list of integers
    `{1, 2, ...}` initializing a variable, its '=' ending at `at`; else None."""
    m = forms.integers.match(text, at)
    if m is None:
        return None
    return m.start(1), m.end(), "{" + m.group(1).translate(_WITHOUT_SPACES).replace(",", ", ") + "}"


def regions(text: str, forms: Forms, read_bodies: bool = True) -> Optional[list]:
    """The parts of the text the grammar need not read, in order, each (offset past its '{', offset past
    its '}', what is there): the Block read, for a function body (read_bodies=False: a BodyPlace, the body
    left to read, its end found by body_end); None, for a debug section of plain data; the list's text,
    for a list of integers initializing a module variable. None where the scanner declines a body or a
    comment or string is not closed.

    A function body is a '{' outside any other braces whose statement (since the last ';' or '}' outside
    braces) names .entry or .func and is neither a .section nor an initialized declaration: a guess, that
    read() has the grammar check."""
    found, depth, line, counted, at = [], 0, 1, 0, 0
    names_function, other, section = False, False, -1      # the statement so far: .entry/.func, '='/.section
    while True:
        m = forms.module_event.search(text, at)
        if m is None:
            return found
        token, at = m.group(0), m.end()
        if token in ("//", "/*", '"'):
            at = past_comment_or_string(text, token, m.start(), at, forms)
            if at is None:
                return None
        elif token == "{" and depth == 0 and names_function and not other:
            line += text.count("\n", counted, at)
            if read_bodies:
                body = read_body(text, at, line, forms)
            else:
                end = body_end(text, at, forms)
                body = None if end is None else (BodyPlace(at, end, line), end)
            if body is None:
                return None
            found.append((at, body[1], body[0]))
            line += text.count("\n", at, body[1])
            at = counted = body[1]
            names_function = False
        elif token == "{" and depth == 0 and section >= 0 and (end := section_end(text, section, at, forms)):
            found.append((at, end, None))
            at, names_function, other, section = end, False, False, -1
        elif token == "{":
            depth += 1
        elif token == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                names_function, other, section = False, False, -1
        elif depth:
            continue
        elif token == ";":
            names_function, other, section = False, False, -1
        elif token in (".entry", ".func"):
            names_function = True
        else:                                                # '=' or .section
            listed = integer_list(text, at, forms) if token == "=" else None
            if listed is not None:
                found.append(listed)
                at = listed[1]
            other, section = True, m.start() if token == ".section" else section


@fast.fast_version_of(grammar.parse_with_grammar)
def parse(text: str) -> syntax.ModuleTree:
    """grammar.parse_with_grammar(text): the fast reader's tree where it vouches for the text (read), else
    the grammar's."""
    tree = read(text, grammar._parser(), grammar._module)
    return tree if tree is not None else grammar.parse_with_grammar(text)


def read(text: str, parser, module_of) -> Optional[syntax.ModuleTree]:
    """The module's tree, the one grammar.parse_with_grammar(text) gives, when the fast path vouches for
    every statement of every body; None where it declines (then the grammar reads the text). `parser` is
    the grammar's (grammar._parser(): ptx.lark's terminals, parsing into _Build's nodes) and `module_of`
    its module builder (grammar._module): parse passes them."""
    found = skeleton(text, parser, module_of, read_bodies=True)
    if found is None:
        return None
    tree, holders, bodies = found
    for function, block in zip(holders, bodies):
        function.body = block
    return tree


def skeleton(text: str, parser, module_of, read_bodies: bool) -> Optional[tuple]:
    """(the module's tree with each function body the placeholder the grammar read, the FunctionTrees
    holding them in order, what regions() found there in the same order: Blocks read, or BodyPlaces);
    None where the scanner or the grammar declines, or the grammar does not put the bodies where
    regions() guessed."""
    if PLACEHOLDER in text:
        return None
    with collector.paused():
        found = regions(text, forms_of(parser), read_bodies)
    if found is None:
        return None
    pieces, last, bodies, lists = [], 0, [], []
    for opened, closed, part in found:
        pieces.append(text[last:opened])
        if isinstance(part, (syntax.Block, BodyPlace)):
            pieces.append(f"{BODY}{len(bodies)}:")
            bodies.append(part)
        elif part is not None:
            pieces.append(f"{INTEGERS}{len(lists)}")
            lists.append(part)
        pieces.append("\n" * text.count("\n", opened, closed - 1) + "}")
        last = closed
    pieces.append(text[last:])
    try:
        items = parser.parse("".join(pieces))
    except Exception:                       # anything the grammar does not read: its own reading reports it
        return None
    tree = module_of(items, [])
    holders = _body_holders(tree, len(bodies))
    if holders is None or not _place_lists(tree, lists):
        return None
    return tree, holders, bodies


def _body_holders(tree: syntax.ModuleTree, count: int) -> Optional[list]:
    """The functions whose body the grammar read as placeholder k, for k = 0 .. count - 1, in order; None
    where they are not that (the guess of regions() was wrong)."""
    placed = [f for f in tree.functions if f.body is not None]
    if len(placed) != count:
        return None
    for k, function in enumerate(placed):
        items = function.body.items
        if len(items) != 1 or items[0].label != f"{BODY}{k}" or items[0].text:
            return None
    return placed


# --- the bodies read one by one (analysis.analyse(jobs=N): each in the process that evaluates it) ----------
@dataclass(frozen=True)
class BodyPlace:
    """A function body not read yet: the offset past its '{', the offset past its '}', the line of its '{'."""
    opened: int
    closed: int
    line: int


def body_end(text: str, at: int, forms: Forms) -> Optional[int]:
    """The offset past the '}' that closes the body whose '{' ends just before `at`: its braces counted,
    outside comments and strings; None where one is not closed. (read_body finds the same end where it
    reads the body: BodiesApart.body checks that, so a wrong end here is a body declined, never a body
    misread.) Compilers close a body with a '}' that starts a line: the first such '}' where the braces
    since `at` balance is the end, where no comment or string between could hold a brace (brace_hazard:
    it may see one where there is none, never miss one; else they are counted one by one, outside
    comments and strings)."""
    opened, closed, looked = 1, 0, at
    while True:
        candidate = text.find("\n}", looked)
        if candidate < 0:
            break
        end = candidate + 2
        opened += text.count("{", looked, end)
        closed += text.count("}", looked, end)
        looked = end
        if opened == closed:
            if forms.brace_hazard.search(text, at, end) is None:
                return end
            break
    depth, search = 1, forms.brace_event.search
    while True:
        m = search(text, at)
        if m is None:
            return None
        token, at = m.group(0), m.end()
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            if depth == 0:
                return at
        else:
            at = past_comment_or_string(text, token, m.start(), at, forms)
            if at is None:
                return None


class BodiesApart:
    """The module read but for its function bodies, each read when asked (grammar.parse_bodies_apart)."""

    def __init__(self, text: str, tree: syntax.ModuleTree, holders: list, places: list, forms: Forms):
        self.text, self.tree, self.functions, self.places, self.forms = text, tree, holders, places, forms

    def size(self, k: int) -> int:
        """The characters of body k."""
        return self.places[k].closed - self.places[k].opened

    def body(self, k: int) -> Optional[syntax.Block]:
        """Body k as read_body reads it, which is what read() puts there; None where the scanner declines
        it or ends it elsewhere than body_end did."""
        place = self.places[k]
        with collector.paused():
            found = read_body(self.text, place.opened, place.line, self.forms)
        return found[0] if found is not None and found[1] == place.closed else None

    def whole(self) -> Optional[syntax.ModuleTree]:
        """The tree with every body read and put in its place (read()'s tree); None where a body is
        declined. Done once: it puts the bodies in self.tree."""
        bodies = [self.body(k) for k in range(len(self.places))]
        if any(block is None for block in bodies):
            return None
        for function, block in zip(self.functions, bodies):
            function.body = block
        return self.tree


@fast.fast_version_of(grammar.bodies_apart)
def parse_apart(text: str) -> Optional[BodiesApart]:
    """grammar.bodies_apart(text), the optimised path: the module's structure read now (regions() finds
    each body's end by its braces, the grammar reads the rest), the bodies when asked; None where the
    scanner or the grammar declines the module's structure."""
    parser = grammar._parser()
    found = skeleton(text, parser, grammar._module, read_bodies=False)
    if found is None:
        return None
    tree, holders, places = found
    return BodiesApart(text, tree, holders, places, forms_of(parser))


def _place_lists(tree: syntax.ModuleTree, lists: list) -> bool:
    """Each list placeholder is the initializer of one module declaration: write the list there, in the
    statement's text and its declarator's. False where one is not found once."""
    if not lists:
        return True
    left = dict(enumerate(lists))
    for i, statement in enumerate(tree.declarations):
        marks = _LIST_MARK.findall(statement.text) if PLACEHOLDER in statement.text else ()
        if not marks:
            continue
        text, declarators = statement.text, list(statement.declarators)
        for k in map(int, marks):
            mark = f"{{{INTEGERS}{k}}}"
            holders = [j for j, d in enumerate(declarators) if d.text.endswith(" = " + mark)]
            if k not in left or text.count(mark) != 1 or len(holders) != 1:
                return False
            written, d = left.pop(k), declarators[holders[0]]
            text = text.replace(mark, written)
            declarators[holders[0]] = syntax.Declarator(d.name, d.text.replace(mark, written), d.count)
        tree.declarations[i] = syntax.Statement(statement.line, text, statement.label, statement.instruction,
                                                tuple(declarators))
    return not left
