"""The argument parser every command uses, kept light (argparse only) so that `layoutproof --help` and
`--version` start in a few milliseconds: one-line usage errors in the one error format of docs/CLI.md,
with "did you mean" for a near miss."""
from __future__ import annotations

import argparse
import re

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
