"""Reading PTX text: its size limits, its kernels, their statements, and the shared-memory symbols.

No grammar library: PTX statements end with ';' (PTX ISA 4: "Statements ... terminated with a
semicolon"), labels end with ':', function bodies are brace-delimited, and the few directives that end
at the end of their line (.version, .target, .address_size, .file, .loc) are recognised by name.
Comments (// and /* */) are blanked first, keeping line numbers. A '{' or '}' that starts a statement
opens or closes a scope (inline-asm blocks); elsewhere braces are vector operands ({%r1, %r2}).

Every step is one pass over the text, or a pass per statement (no regular expression here can backtrack
more than a bounded distance): the reader's time and memory grow linearly with the file
(tests/test_ptx_runaways.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from spec.rule import SpecError

from solver.kernel.frontend.instruction import parse_integer

# Bounds checked before any work: a PTX file and one function. Triton's and CUTLASS's largest kernels
# are a few MB and some 10^5 statements.
MAX_BYTES = 32 * 1024 * 1024
MAX_STATEMENTS = 200_000          # per function
MAX_TOTAL_STATEMENTS = 400_000    # per file (some 10 s of evaluation)
RULE = ""                         # input errors of the PTX reader name no rule of the catalogue

LINE_DIRECTIVES = (".version", ".target", ".address_size", ".file", ".loc", ".section")
IDENTIFIER = r"[A-Za-z_$%][\w$]*"       # PTX ISA 4.4 (identifiers; % for compiler names)
# A repeated group keeps what it needs to backtrack, some 170 bytes an iteration: where one may repeat
# millions of times, it is possessive (*+).
_FUNCTION_KEYWORD = re.compile(r"\.(entry|func)\b")
_LINKAGE_BACKWARDS = re.compile(r"(?:\s+(?:elbisiv|kaew|nretxe)\.)*+")    # (\.visible|\.weak|\.extern)\s+, reversed
_IDENTIFIER = re.compile(IDENTIFIER)
_IDENTIFIER_START = re.compile(r"[A-Za-z_$]")
_WORD = re.compile(r"[\w$]*")
_SPACE = re.compile(r"\s*")
_NONSPACE = re.compile(r"\S")
_PARAM_KEYWORD = re.compile(r"\.param\b")
_LABEL = re.compile(r"\s*(" + IDENTIFIER + r")\s*:(?!:)")
_TARGET = re.compile(r"^[ \t]*\.target[ \t]+([\w, ]+)", re.MULTILINE)
_COMMENT_START = re.compile(r"/[/*]")
_SHARED_KEYWORD = re.compile(r"(?:^|(?<= ))\.shared(?= |$)")     # the first .shared token
_DIRECTIVE_RUN = re.compile(r"(?: (?:\.align [0-9]\S*|\.\w+)(?= |$))*+")   # ... then the name
_LAST_TYPE = re.compile(r"(?<= )\.([a-z]\d+|pred)$")                # the type, right before the name
_ALIGN = re.compile(r"(?<= )\.align ([0-9]\S*)(?= |$)")
_DECLARATOR = re.compile(r"(" + IDENTIFIER + r") ?((?:\[ ?\d* ?\] ?)*+)(?:=.*)?")
_DIMENSION = re.compile(r"\[ ?(\d*) ?\]")
_VECTOR = re.compile(r"(?<= )\.v([248])(?= |$)")
_TYPE_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4,
               "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16, "pred": 1}
MAX_ALIGNMENT = 1 << 31           # the largest .align ptxas 13.0 takes (2^32: "Constant overflow")


@dataclass(frozen=True)
class Statement:
    line: int                 # 1-based line of its first character in the file
    text: str                 # without the ';', whitespace collapsed
    label: Optional[str] = None   # set for a label statement (text is then "")


@dataclass(frozen=True)
class SharedSymbol:
    name: str
    align: int
    size: Optional[int]       # bytes; None for an extern (dynamic) array
    line: int


@dataclass
class Function:
    name: str
    kind: str                 # "entry" or "func"
    line: int
    params: list
    statements: list = field(default_factory=list)
    shared: list = field(default_factory=list)     # its own .shared declarations


@dataclass
class Module:
    targets: list             # the .target names, e.g. ["sm_90a"]
    shared: list              # module-level .shared declarations, in order
    functions: list


def check_size(text: str) -> None:
    if len(text) > MAX_BYTES:
        raise SpecError("ptx", f"<{len(text)} characters>", f"larger than the {MAX_BYTES} bytes read", RULE)
    if "\x00" in text or "\ufffd" in text:      # a NUL or a byte that is not UTF-8: a binary, not PTX text
        raise SpecError("ptx", f"<{len(text)} characters>", "not PTX text (binary data)", RULE)


def read_text(path: str, stdin=None) -> str:
    """The file's text ('-': standard input), refused past MAX_BYTES before it is all read."""
    import sys
    try:
        if path == "-":
            stream = (stdin or sys.stdin)
            text = stream.read(MAX_BYTES + 1)
        else:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise SpecError("ptx", path, f"cannot read: {error.strerror or error}", RULE) from None
    check_size(text)
    return text


def strip_comments(text: str) -> str:
    """Comments become spaces; a block comment keeps its line breaks. A '/*' never closed is malformed
    (ptxas 13.0: "unexpected EOF while scanning")."""
    pieces, at = [], 0
    while True:
        m = _COMMENT_START.search(text, at)
        if m is None:
            break
        pieces.append(text[at:m.start()])
        if m.group(0) == "//":
            end = text.find("\n", m.end())
            at = len(text) if end < 0 else end
            continue
        end = text.find("*/", m.end())
        if end < 0:
            raise SpecError("ptx", f"line {text.count(chr(10), 0, m.start()) + 1}",
                            "a block comment '/*' is not closed before the end of the file "
                            "(ptxas 13.0: 'unexpected EOF while scanning')", RULE)
        pieces.append("\n" * text.count("\n", m.start(), end))
        at = end + 2
    pieces.append(text[at:])
    return "".join(pieces)


class _Lines:
    """The line of each offset asked, in increasing order: each line break is counted once (a list of the
    line starts of a file of blank lines would be as large as the file is long, in Python objects)."""

    def __init__(self, text: str, offset: int = 0, line: int = 1):
        self.text, self.offset, self.line = text, offset, line

    def __call__(self, offset: int) -> int:
        if offset < self.offset:                      # asked out of order: count again from the start
            self.offset, self.line = 0, 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


class _NextOf:
    """The first index >= a position holding one of some characters, for positions that only grow: each
    character of the text is looked at once however many positions ask (a file of many '.func (' that
    never close would otherwise be scanned to its end once per '(')."""

    def __init__(self, text: str, characters: str):
        self.text, self.pattern = text, re.compile("[" + re.escape(characters) + "]")
        self.asked, self.found = 0, -1

    def __call__(self, position: int) -> int:
        if not (self.asked <= position <= self.found):
            m = self.pattern.search(self.text, position)
            self.found = m.start() if m else len(self.text)
        self.asked = position
        return self.found


def _matching_brace(text: str, opening: int) -> int:
    depth = 0
    for m in _BRACES.finditer(text, opening):
        depth += 1 if m.group(0) == "{" else -1
        if depth == 0:
            return m.start()
    raise SpecError("ptx", text[opening:opening + 40], "a function body has no closing '}'", RULE)


def _header(text: str, keyword: re.Match, next_close: _NextOf) -> Optional[tuple]:
    """(name, the '(' of its parameters) when the .entry / .func keyword starts a function header:
    [(return parameters)] name ( ... ."""
    at = _SPACE.match(text, keyword.end()).end()
    if text.startswith("(", at):
        close = next_close(at)
        if close >= len(text):
            return None
        at = _SPACE.match(text, close + 1).end()
    name = _IDENTIFIER.match(text, at)
    if name is None:
        return None
    opening = _SPACE.match(text, name.end()).end()
    return (name.group(0), opening) if text.startswith("(", opening) else None


def _linkage_start(text: str, at: int, floor: int) -> int:
    """Where the header starting at `at` begins: before the .visible / .weak / .extern that precede it
    (matched backwards, on the reversed text since `floor`)."""
    return at - _LINKAGE_BACKWARDS.match(text[floor:at][::-1]).end()


def _parameter_names(text: str, begin: int, end: int) -> list:
    """The name each `.param` of text[begin:end] declares: the identifier that ends its item (the text up
    to the next ',' or ')'), after an optional [N]."""
    names, at = [], begin
    items = _NextOf(text, ",)")
    while True:
        m = _PARAM_KEYWORD.search(text, at, end)
        if m is None:
            return names
        stop = min(items(m.end()), end)
        name = _trailing_identifier(text, m.end(), stop)
        if name is not None:
            names.append(name)
        at = max(stop, m.end())


def _trailing_identifier(text: str, begin: int, end: int) -> Optional[str]:
    """The identifier text[begin:end] ends with, before an optional [N]: the word characters at its end
    (found on the reversed text), from the first that may start an identifier, or from a '%' before them."""
    item = text[begin:end].rstrip()
    if item.endswith("]"):
        opening = item.rfind("[")
        if opening < 0 or not item[opening + 1:-1].strip().isdigit():
            return None
        item = item[:opening].rstrip()
    word_start = len(item) - _WORD.match(item[::-1]).end()
    if word_start > 0 and item[word_start - 1] == "%":
        return item[word_start - 1:]
    m = _IDENTIFIER_START.search(item, word_start)
    return item[m.start():] if m else None


def parse(text: str) -> Module:
    check_size(text)
    text = strip_comments(text)
    lines = _Lines(text)
    functions, spans, total, read_to = [], [], 0, 0
    next_close, next_body = _NextOf(text, ")"), _NextOf(text, "{;")
    for keyword in _FUNCTION_KEYWORD.finditer(text):
        if keyword.start() < read_to:
            continue                                  # inside an earlier body or parameter list
        header = _header(text, keyword, next_close)
        if header is None:
            continue
        name, opening = header
        close_params = _closing_paren(text, opening)
        read_to = close_params + 1
        after = next_body(close_params + 1)
        if after >= len(text) or text[after] == ";":
            continue                                  # a declaration, no body
        end = _matching_brace(text, after)
        start = _linkage_start(text, keyword.start(), spans[-1][1] if spans else 0)
        function = Function(name, keyword.group(1), lines(start), _parameter_names(text, opening + 1, close_params))
        function.statements = list(statements(text, after + 1, end, _Lines(text, after + 1, lines(after + 1))))
        total += len(function.statements)
        if total > MAX_TOTAL_STATEMENTS:
            raise SpecError("ptx", f"<more than {MAX_TOTAL_STATEMENTS} statements>",
                            f"longer than the {MAX_TOTAL_STATEMENTS} statements read per file", RULE)
        function.shared = shared_symbols(function.statements)
        functions.append(function)
        spans.append((start, end + 1))
        read_to = end + 1
    outside = _outside(text, spans)
    shared = shared_symbols(statements(outside, 0, len(outside), _Lines(outside), MAX_TOTAL_STATEMENTS,
                                       "module (outside its functions)"))
    targets = [t.strip() for m in _TARGET.finditer(outside) for t in m.group(1).split(",")]
    return Module(targets, shared, functions)


def _closing_paren(text: str, opening: int) -> int:
    depth = 0
    for m in _PARENTHESES.finditer(text, opening, min(len(text), opening + 1_000_000)):
        depth += 1 if m.group(0) == "(" else -1
        if depth == 0:
            return m.start()
    raise SpecError("ptx", text[opening:opening + 40], "a parameter list has no closing ')'", RULE)


def _outside(text: str, spans: list) -> str:
    """The module-level text: function bodies replaced by blank lines (line numbers kept)."""
    pieces, last = [], 0
    for start, end in spans:
        pieces.append(text[last:start])
        pieces.append("\n" * text.count("\n", start, end))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


# --- shared declarations -------------------------------------------------------------------------------------
def shared_symbols(found_statements) -> list:
    """The .shared variables the statements declare, in order."""
    return [symbol for symbol in map(shared_declaration, found_statements) if symbol is not None]


def shared_declaration(statement: Statement) -> Optional[SharedSymbol]:
    """PTX ISA 5.4 (variable declarations): [.extern] .shared {directive | .align N} .type name {[N]}
    [= initializer], read from the statement's first .shared; anything else is not a declaration this
    reader uses (its symbol is then unknown). The type is the directive before the name; a .vN vector of
    it is N times its size, and aligned to that size by default (PTX ISA 5.4.2, Vectors). N of .align is
    an integer literal (decimal, 0x, octal, 0b) and a power of two (ptxas 13.0: "Alignment must be a power
    of two"); of two .align, the larger holds. ptxas 13.0 lays `.b8 first[1]` then `.v4 .b32 vec[4]` out
    in 16 + 64 bytes, and `.b8 first[1]` then `.align 16 .align 64 .b8 x[1]` (either order) in 64 + 1
    (the sizes of their .nv.shared sections)."""
    text = statement.text if statement.label is None else ""
    keyword = _SHARED_KEYWORD.search(text)
    if keyword is None:
        return None
    before = keyword.start() - len(".extern ")
    extern = before >= 0 and text.startswith(".extern ", before) and (before == 0 or text[before - 1] == " ")
    run = _DIRECTIVE_RUN.match(text, keyword.end()).end()     # (regular expressions that cannot backtrack:
    kind = _LAST_TYPE.search(text, keyword.end(), run)       # a statement may hold millions of tokens)
    declarator = _DECLARATOR.fullmatch(text, run + 1) if kind else None
    if declarator is None:
        return None
    name = declarator.group(1)
    vector = _VECTOR.search(text, keyword.end(), run)
    element = (int(vector.group(1)) if vector else 1) * _TYPE_BYTES.get(kind.group(1), 1)
    size = None if extern else _array_bytes(element, _DIMENSION.findall(declarator.group(2)))
    align = refused = None
    for number in _ALIGN.finditer(text, keyword.end(), run):
        value = _alignment(number.group(1))
        align, refused = max(align or 1, value or 1), refused or (None if value else number.group(1))
    if refused is not None:
        shown_digits = refused if len(refused) <= 40 else f"{refused[:20]}... ({len(refused)} characters)"
        raise SpecError("ptx", f"line {statement.line}: .shared {name} .align {shown_digits}",
                        "an alignment is a power of two from 1 to 2^31 (ptxas 13.0 refuses this one: "
                        "'Alignment must be a power of two')", RULE)
    return SharedSymbol(name, align or element, size, statement.line)


def _array_bytes(element: int, dimensions: list) -> int:
    """element x each dimension ([] counts 0), stopping past 2^64 (a size no shared memory has: the
    product of many long dimensions would otherwise grow without bound)."""
    size = element
    for d in dimensions:
        size *= (int(d) if len(d) <= 20 else 1 << 64) if d else 0
        if size > 1 << 64:
            return size
    return size


def _alignment(digits: str) -> Optional[int]:
    """The value of .align's integer literal when ptxas takes it (a power of two up to 2^31), else None."""
    value = parse_integer(digits) if len(digits) <= 40 else None
    if value is None or value <= 0 or value & (value - 1) or value > MAX_ALIGNMENT:
        return None
    return value


# --- statements ----------------------------------------------------------------------------------------------
_BOUNDARY = re.compile(r"[;{}\n]")
_STATEMENT_END = re.compile(r"[;{}]")
_BRACES = re.compile(r"[{}]")
_PARENTHESES = re.compile(r"[()]")
_SPACES = re.compile(r"\s+")
_NOTHING = re.compile(r"[\s{};]*")         # spaces, and statements and scopes with nothing in them


def statements(text: str, begin: int, end: int, line_of: _Lines, limit: int = MAX_STATEMENTS,
               where: str = "function"):
    """The statements of text[begin:end] (a function body), in order, with their lines (line_of: the line
    of an offset, asked in increasing order).

    A statement ends at ';' or at a '}' that closes a scope; a line directive, or a statement that is only
    a label (`name:`), ends at its line break. A '{' with nothing before it in its statement opens a scope;
    otherwise it opens a vector operand, inside which nothing ends a statement. The scan jumps from one
    character that can end the statement to the next (blank lines and the line breaks inside a statement
    are skipped in one search), so it costs one step per statement and brace, not per line."""
    count = 0

    def counted():
        nonlocal count
        count += 1
        if count > limit:
            raise SpecError("ptx", f"<a {where} of more than {limit} statements>",
                            f"longer than the {limit} statements read per {where}", RULE)

    def emit(start: int, stop: int):
        position = start
        while True:                                   # leading labels
            m = _LABEL.match(text, position, stop)
            if not m:
                break
            counted()
            yield Statement(line_of(m.start(1)), "", m.group(1))
            position = m.end()
        first = _NONSPACE.search(text, position, stop)
        if first is not None:
            counted()
            yield Statement(line_of(first.start()), _collapsed(text, first.start(), stop))

    start = pos = begin
    depth, first, line_end = 0, None, None
    while True:
        if first is None:                             # a statement begins: its first character decides,
            first = _NOTHING.match(text, pos, end).end()   # after empty statements and scopes ('{', '}', ';')
            start = max(start, 1 + max(text.rfind(c, pos, first) for c in "{};"))
            if first >= end:
                break
            pos = first
            line_end = _line_end(text, first, end)
        pattern = _BRACES if depth else _BOUNDARY if line_end == -1 else _STATEMENT_END
        alone = not depth and line_end is not None and line_end >= 0
        m = pattern.search(text, pos, line_end if alone else end)  # (not past the label's line: the
        if m is not None:                                           # next ';' may be far)
            stop = m.start()
        elif alone:
            stop = line_end                           # a label alone on its line
        else:
            break
        char = m.group(0) if m else "\n"
        if char == "{" or (char == "}" and depth):    # a vector operand opens or closes (a scope's '{'
            depth += 1 if char == "{" else -1         # starts no statement: it was skipped above)
            pos = stop + 1
            continue
        yield from emit(start, stop)                  # ';', a scope's '}', a line break that ends it
        start = pos = stop + 1
        first = None
    yield from emit(start, end)


def _collapsed(text: str, start: int, stop: int, chunk: int = 1 << 16) -> str:
    """text[start:stop] with each run of spaces one space and none at its end, a chunk at a time (at once,
    re.sub's pieces of a statement of millions of tokens take some 20 bytes per character). Chunks end
    before a non-space character, so that no run of spaces is cut in two."""
    pieces = []
    while start < stop:
        cut = _NONSPACE.search(text, min(start + chunk, stop), stop)
        cut = cut.start() if cut else stop
        pieces.append(_SPACES.sub(" ", text[start:cut]))
        start = cut
    return "".join(pieces).rstrip()


def _line_end(text: str, first: int, end: int) -> Optional[int]:
    """How the statement starting at `first` may end at a line break: -1 for a line directive (at its
    first line break outside braces); for a label alone on its line (`name :`, nothing after the ':' on
    that line), that line break; None when no line break ends it."""
    if text.startswith(LINE_DIRECTIVES, first):
        return -1
    name = _IDENTIFIER.match(text, first, end)
    if name is None:
        return None
    colon = _NONSPACE.search(text, name.end(), end)
    if colon is None or text[colon.start()] != ":":
        return None
    after = _NONSPACE.search(text, colon.end(), end)
    line_break = text.find("\n", colon.end(), after.start() if after else end)
    return line_break if line_break >= 0 else None


def arch_of_targets(targets: list, family: str) -> tuple:
    """(arch, how it was decided): the .target when it has the MMA family (wgmma: sm_90a; tcgen05:
    sm_100a/sm_101a/sm_110a -> sm100, sm_103a -> sm103), else the family's first arch."""
    for target in targets:
        m = re.fullmatch(r"sm_(\d+)[af]?", target)
        number = int(m.group(1)) if m else None
        if family == "wgmma" and number == 90:
            return "sm90", f".target {target}"
        if family == "tcgen05" and number == 103:
            return "sm103", f".target {target}"
        if family == "tcgen05" and number in (100, 101, 110):
            return "sm100", f".target {target}"
    guess = "sm90" if family == "wgmma" else "sm100"
    named = ", ".join(targets) or "none"
    return guess, f".target {named} is not a {family} target: read as {guess}"
