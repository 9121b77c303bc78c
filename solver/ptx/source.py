"""Reading PTX text: its size limits, its kernels, their statements, and the shared-memory symbols.

No grammar library: PTX statements end with ';' (PTX ISA 4: "Statements ... terminated with a
semicolon"), labels end with ':', function bodies are brace-delimited, and the few directives that end
at the end of their line (.version, .target, .address_size, .file, .loc) are recognised by name.
Comments (// and /* */) are blanked first, keeping line numbers. A '{' or '}' that starts a statement
opens or closes a scope (inline-asm blocks); elsewhere braces are vector operands ({%r1, %r2}).
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Optional

from spec.rule import SpecError

# Bounds checked before any work: a PTX file and one function. Triton's and CUTLASS's largest kernels
# are a few MB and some 10^5 statements.
MAX_BYTES = 32 * 1024 * 1024
MAX_STATEMENTS = 200_000          # per function
MAX_TOTAL_STATEMENTS = 400_000    # per file (some 10 s of evaluation)
RULE = ""                         # input errors of the PTX reader name no rule of the catalogue

LINE_DIRECTIVES = (".version", ".target", ".address_size", ".file", ".loc", ".section")
_FUNCTION = re.compile(r"(?:\.(?:visible|weak|extern)\s+)*\.(entry|func)\b\s*(\([^)]*\)\s*)?([A-Za-z_$%][\w$]*)\s*\(")
_SHARED = re.compile(r"(\.extern\s+)?\.shared\s+((?:\.\w+\s+)*?)(?:\.align\s+(\d+)\s+)?((?:\.\w+\s+)*)"
                     r"\.([a-z]\d+|pred)\s+([A-Za-z_$%][\w$]*)\s*((?:\[\s*\d*\s*\]\s*)*)(?:=[^;]*)?;")
_PARAM = re.compile(r"\.param\b[^,)]*?([A-Za-z_$%][\w$]*)\s*(?:\[\s*\d+\s*\])?\s*(?=[,)]|$)")
_LABEL = re.compile(r"\s*([A-Za-z_$%][\w$]*)\s*:(?!:)")
_TARGET = re.compile(r"^[ \t]*\.target[ \t]+([\w, ]+)", re.MULTILINE)
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_TYPE_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4,
               "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16, "pred": 1}


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
    """Comments become spaces; a block comment keeps its line breaks."""
    return _COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n") if m.group(0).startswith("/*") else "", text)


def _line_index(text: str) -> list:
    return [m.end() for m in re.finditer("\n", text)]


def _line_of(starts: list, offset: int) -> int:
    return bisect.bisect_right(starts, offset) + 1


def _matching_brace(text: str, opening: int) -> int:
    depth = 0
    for m in _BRACES.finditer(text, opening):
        depth += 1 if m.group(0) == "{" else -1
        if depth == 0:
            return m.start()
    raise SpecError("ptx", text[opening:opening + 40], "a function body has no closing '}'", RULE)


def _shared_symbols(text: str, offset: int, starts: list) -> list:
    found = []
    for m in _SHARED.finditer(text):
        extern, align, type_name, dims = m.group(1), m.group(3), m.group(5), m.group(7)
        size = None
        if not extern:
            count = 1
            for d in re.findall(r"\[\s*(\d*)\s*\]", dims):
                count *= int(d) if d else 0
            size = count * _TYPE_BYTES.get(type_name, 1)
        found.append(SharedSymbol(m.group(6), int(align) if align else _TYPE_BYTES.get(type_name, 1), size,
                                  _line_of(starts, offset + m.start())))
    return found


def parse(text: str) -> Module:
    check_size(text)
    text = strip_comments(text)
    starts = _line_index(text)
    functions, spans, total = [], [], 0
    for m in _FUNCTION.finditer(text):
        if spans and m.start() < spans[-1][1]:
            continue                                  # inside an earlier body
        close_params = _closing_paren(text, m.end() - 1)
        rest = re.match(r"[^{;]*", text[close_params + 1:])
        after = close_params + 1 + rest.end()
        if after >= len(text) or text[after] == ";":
            continue                                  # a declaration, no body
        end = _matching_brace(text, after)
        params = _PARAM.findall(text[m.end():close_params])
        function = Function(m.group(3), m.group(1), _line_of(starts, m.start()), params)
        function.statements = list(statements(text, after + 1, end, starts))
        total += len(function.statements)
        if total > MAX_TOTAL_STATEMENTS:
            raise SpecError("ptx", f"<more than {MAX_TOTAL_STATEMENTS} statements>",
                            f"longer than the {MAX_TOTAL_STATEMENTS} statements read per file", RULE)
        function.shared = _shared_symbols(text[after + 1:end], after + 1, starts)
        functions.append(function)
        spans.append((m.start(), end + 1))
    outside = _outside(text, spans)
    shared = _shared_symbols(outside, 0, _line_index(outside))
    targets = [t.strip() for m in _TARGET.finditer(outside) for t in m.group(1).split(",")]
    return Module(targets, shared, functions)


def _closing_paren(text: str, opening: int) -> int:
    depth = 0
    for i in range(opening, min(len(text), opening + 1_000_000)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
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


_BOUNDARY = re.compile(r"[;{}\n]")
_BRACES = re.compile(r"[{}]")
_LABEL_ONLY = re.compile(r"([A-Za-z_$%][\w$]*)\s*:")


def statements(text: str, begin: int, end: int, starts: list):
    """The statements of text[begin:end] (a function body), in order, with their lines."""
    start, depth, count = begin, 0, 0

    def emit(stop: int):
        nonlocal count
        piece = text[start:stop]
        position = start
        while True:                                   # leading labels
            m = _LABEL.match(piece)
            if not m:
                break
            count += 1
            yield Statement(_line_of(starts, position + m.start(1)), "", m.group(1))
            piece, position = piece[m.end():], position + m.end()
        body = " ".join(piece.split())
        if body:
            count += 1
            if count > MAX_STATEMENTS:
                raise SpecError("ptx", f"<a function of more than {MAX_STATEMENTS} statements>",
                                f"longer than the {MAX_STATEMENTS} statements read per function", RULE)
            leading = len(piece) - len(piece.lstrip())
            yield Statement(_line_of(starts, position + leading), body)

    for m in _BOUNDARY.finditer(text, begin, end):
        char, pos = m.group(0), m.start()
        if char == "\n":
            head = text[start:pos].strip() if depth == 0 and pos - start < 4096 else ""
            if head.startswith(LINE_DIRECTIVES) or _LABEL_ONLY.fullmatch(head):
                yield from emit(pos)
                start = pos + 1
        elif char == "{":
            if depth == 0 and not text[start:pos].strip():
                start = pos + 1                       # a scope opens
            else:
                depth += 1
        elif char == "}":
            if depth > 0:
                depth -= 1
            else:
                yield from emit(pos)                  # a scope closes
                start = pos + 1
        elif depth == 0:
            yield from emit(pos)
            start = pos + 1
    yield from emit(end)


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
