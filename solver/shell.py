"""The command-line pieces every command-line program of layoutproof shares (`layoutproof` itself in
solver/cli, and the fuzz campaign's and adapters' own): the argument parser, whose usage errors are one line
in the one error format, with "did you mean" for a near miss; the number argument types; and the progress
line on a terminal. Kept light (argparse only; spec's number reader is imported on first use) so that
`layoutproof --help` and `--version` start in a few milliseconds.
"""
from __future__ import annotations

import argparse
import re
import sys
import time

ERROR_PREFIX = "layoutproof: error: "     # every error line begins so (docs/CLI.md "Conventions")


class UsageError(ValueError):
    """A malformed command line; its message is already the whole line to print (exit 2)."""


def closest(word: str, known):
    """The one of `known` that `word` is a near miss of (a mistyped flag or value), or None."""
    import difflib
    if not isinstance(word, str) or len(word) > 64:
        return None
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(word: str, known) -> str:
    """' (did you mean X?)' when `word` is a near miss of one of `known`, else ''."""
    found = closest(word, known)
    return f" (did you mean {found}?)" if found is not None else ""


def option_names(parser) -> list:
    """Every option string `parser` takes (--help included), for did_you_mean."""
    return [name for action in parser._actions for name in action.option_strings]


_INVALID_CHOICE = re.compile(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)$")


class HelpFormatter(argparse.HelpFormatter):
    """argparse's, but a line of the description or epilog that begins with two spaces (an example
    command) is kept as written, not wrapped into its neighbours: examples stay whole, to copy."""

    def _fill_text(self, text, width, indent):
        kept, lines = [], []

        def flush():
            if lines:
                kept.append(super(HelpFormatter, self)._fill_text(" ".join(lines), width, indent))
                lines.clear()
        for line in text.splitlines():
            if line.startswith("  ") or line.endswith(":") and not lines:
                flush()
                kept.append(indent + line)
            else:
                lines.append(line)
        flush()
        return "\n".join(kept)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit 2, in the one error format
    `layoutproof: error: COMMAND: problem`, with "did you mean" for a near miss (docs/CLI.md)."""

    def __init__(self, *arguments, **options):
        options.setdefault("formatter_class", HelpFormatter)
        super().__init__(*arguments, **options)

    def error(self, message):
        found = _INVALID_CHOICE.match(message)
        if found:
            choices = [c.strip(" '") for c in found.group(3).split(",")]
            message += did_you_mean(found.group(2), choices)
        raise UsageError(usage_error_line(self, message))


def usage_error_line(parser, message: str) -> str:
    """`layoutproof: error: tma place: message` (a parser of another program: `PROG: error: message`)."""
    prog = getattr(parser, "prog", "") or ""
    if prog == "layoutproof" or prog.startswith("layoutproof "):
        words = prog[len("layoutproof"):].strip()
        return ERROR_PREFIX + (f"{words}: " if words else "") + message
    return f"{prog}: error: {message}"


# --- numbers ---------------------------------------------------------------------------------------------
def _integer(text: str, minimum=None) -> int:
    """Decimal or 0x-hex ('_' separators allowed: spec.rule.parse_number), at least `minimum`."""
    try:
        value = _parse_number(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{shown(text)}: {error}") from None
    if minimum == 0 and value < 0:
        raise argparse.ArgumentTypeError(f"{shown(text)} is negative")
    if minimum is not None and value < minimum:
        raise argparse.ArgumentTypeError(f"{shown(text)}: must be at least {minimum}")
    return value


def number(text: str) -> int:
    """A non-negative number, decimal or 0x-hex."""
    return _integer(text, 0)


def signed_number(text: str) -> int:
    """A number that may be negative (coordinates, corners): spec/ checks its range."""
    return _integer(text)


def positive_number(text: str) -> int:
    """A count: at least 1."""
    return _integer(text, 1)


MAX_JOBS = 256           # worker processes: far more than any machine this runs on has cores


def job_count(text: str) -> int:
    """--jobs: 1 to MAX_JOBS processes (checked before any is started)."""
    value = _integer(text, 1)
    if value > MAX_JOBS:
        raise argparse.ArgumentTypeError(f"{shown(text)}: at most {MAX_JOBS} processes")
    return value


def _parse_number(text: str) -> int:
    from spec.rule import parse_number
    return parse_number(text)


def shown(value) -> str:
    from spec.rule import shown as spec_shown
    return spec_shown(value)


# --- progress ------------------------------------------------------------------------------------------------
# Progress of long work on a terminal: one line on stderr, rewritten in place at most five times a second
# ("fuzz: 1200/100000 cases, 950/s"), and cleared at the end. Silent when stderr is not a terminal (piped,
# redirected, CI), so output files and logs never carry it.
class Progress:
    def __init__(self, label: str, total: int, unit: str, stream=None, enabled=None, every: float = 0.2):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled, self.every = enabled, every
        self.began = self.last = time.monotonic()
        self.shown = False

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < self.every and done < self.total:
            return
        self.last = now
        rate = done / (now - self.began) if now > self.began else 0.0
        self.stream.write(f"\r{self.label}: {done}/{self.total} {self.unit}, {rate:,.0f}/s ")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
