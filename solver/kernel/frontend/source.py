"""Reading PTX text: its size limits, its kernels, their statements, and the shared-memory symbols.

The text is parsed by the manual's grammar (grammar.py, ptx.lark); nested { } scopes are resolved and
flattened (scope.py). What the grammar cannot read is listed in Module.unread, never skipped silently.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from spec.rule import SpecError

from solver.kernel import collector
from solver.kernel.frontend import grammar, scope
from solver.kernel.frontend.instruction import parse_integer
from solver.kernel.frontend.syntax import Statement

# Bounds checked before any work: a PTX file and one function. Triton's and CUTLASS's largest kernels
# are a few MB and some 10^5 statements.
MAX_BYTES = 32 * 1024 * 1024
MAX_STATEMENTS = 200_000          # per function
MAX_TOTAL_STATEMENTS = 1_000_000  # per file: some 15 s of reading and 800 MB of syntax tree (a 20 MB file holds 430,000)
RULE = ""                         # input errors of the PTX reader name no rule of the catalogue

IDENTIFIER = r"[A-Za-z_$%][\w$]*"       # PTX ISA 4.4 (identifiers; % for compiler names)
# Declarations are read with regular expressions that cannot backtrack (possessive *+): a statement may
# hold millions of tokens.
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
    statements: list = field(default_factory=list)   # syntax.Statement, nested blocks flattened
    shared: list = field(default_factory=list)     # its own .shared declarations
    directives: dict = field(default_factory=dict)  # performance directives: ".reqntid" -> (128, 1, 1)


@dataclass
class Module:
    targets: list             # the .target names, e.g. ["sm_90a"]
    shared: list              # module-level .shared declarations, in order
    functions: list
    unread: list = field(default_factory=list)     # syntax.Unread: what the grammar could not read
    version: Optional[str] = None


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


def parse(text: str) -> Module:
    """The module: its targets, shared symbols and functions (bodies flattened, scopes resolved), and the
    statements the grammar could not read."""
    check_limits(text)
    with collector.paused():                          # (the trees built hold no cycle: collector.py)
        return _parsed(text)


def check_limits(text: str) -> None:
    """The file's size, and its statements counted before any parsing: every statement but a label, a block
    or a line directive ends so."""
    check_size(text)
    if text.count(";") > MAX_TOTAL_STATEMENTS:
        _too_many_statements()


def _too_many_statements():
    raise SpecError("ptx", f"<more than {MAX_TOTAL_STATEMENTS} statements>",
                    f"longer than the {MAX_TOTAL_STATEMENTS} statements read per file", RULE)


def _parsed(text: str) -> Module:
    return _module_of(grammar.parse(text), scope.marker_for(text))


def _module_of(tree, marker: str) -> Module:
    """The Module of a syntax tree: its functions with a body (a declaration, a prototype, has none),
    flattened, checked against the limits."""
    return _collected(_head(tree), (_function(found, found.body, marker) for found in tree.functions
                                    if found.body is not None))


def _head(tree) -> Module:
    """The module of a syntax tree without its functions."""
    return Module(list(tree.targets), shared_symbols(tree.declarations), [], list(tree.unread), tree.version)


def _collected(head: Module, functions) -> Module:
    """head with `functions` (read one by one, in order: each raises its own limit as it is read), the file's
    limit checked after each."""
    found, total = [], 0
    for function in functions:
        total += len(function.statements)
        if total > MAX_TOTAL_STATEMENTS:
            _too_many_statements()
        found.append(function)
    return Module(head.targets, head.shared, found, head.unread, head.version)


def _function(found, block, marker: str) -> Function:
    """The Function of a FunctionTree whose body is `block`: the body flattened (scope.py), its .shared."""
    body = scope.flatten(block, marker)
    if len(body) > MAX_STATEMENTS:
        raise SpecError("ptx", f"<a function of more than {MAX_STATEMENTS} statements>",
                        f"longer than the {MAX_STATEMENTS} statements read per function", RULE)
    function = Function(found.name, found.kind, found.line, list(found.params), body,
                        directives=dict(found.directives))
    function.shared = shared_symbols(body)
    return function


class ModuleApart:
    """A module whose functions are read one by one (analysis.analyse with jobs: each in the process that
    evaluates it): the module without its functions (head: what a function's evaluation reads of the
    module, its targets and shared symbols), the functions' names and sizes, function(k), and assemble()
    (the Module parse() gives, from the functions read)."""

    def __init__(self, text: str, parts):
        self.parts, self.marker = parts, scope.marker_for(text)
        self.head = _head(parts.tree)
        self.names = [found.name for found in parts.functions]

    def size(self, k: int) -> int:
        return self.parts.size(k)

    def function(self, k: int) -> Optional[Function]:
        """The k-th function with a body, as parse() reads it; None where its body is declined. Raises
        parse()'s error where the function is over the limit."""
        with collector.paused():
            block = self.parts.body(k)
            return None if block is None else _function(self.parts.functions[k], block, self.marker)

    def assemble(self, read: list) -> Module:
        """What parse() gives, from what function(k) gave for every k (a Function, or the SpecError it
        raised): parse()'s error, where there is one, is raised (the first in file order, as parse()
        reads)."""
        return _collected(self.head, (_raised(found) for found in read))


def _raised(found):
    if isinstance(found, SpecError):
        raise found
    return found


def parse_apart(text: str) -> Optional[ModuleApart]:
    """The module with its functions left to read one by one (ModuleApart), the limits checked first as
    parse() checks them; None where the reader reads the module whole (grammar.parse_bodies_apart)."""
    check_limits(text)
    with collector.paused():
        parts = grammar.parse_bodies_apart(text)
        return None if parts is None else ModuleApart(text, parts)


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
