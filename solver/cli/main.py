"""The `layoutproof` command line (docs/CLI.md is the contract): builds the parser from the command modules,
runs the command, and turns exceptions into exit statuses.

Every command module defines `register(commands)`, which adds its parsers to the subparsers object
`commands` with `set_defaults(run=<function of args returning the exit status>)`. Every command takes
--json and then prints one JSON document on stdout. Exit status (solver.cli.args): 0 valid / as
expected, 1 well-formed but breaks a rule, 2 malformed input (one line on stderr, naming the field and
the rule), 3 an internal error (one line; LAYOUTPROOF_DEBUG=1 shows the traceback).
"""
from __future__ import annotations

import os
import sys

from spec.rule import SpecError

from solver.cli import desc, fuzz, im2col, prove, ptx, rules, synth, tma, tmem
from solver.cli.args import EXIT_INTERNAL, EXIT_MALFORMED, EXIT_OK, Parser, UsageError

COMMAND_MODULES = (desc, synth, tma, tmem, im2col, prove, rules, fuzz, ptx)


def build_parser() -> Parser:
    from layoutproof import __version__
    top = Parser(prog="layoutproof", description=(
        "Formal model and constraint checker for NVIDIA tensor-core memory layouts: shared-memory "
        "descriptors, swizzles, TMA tensor maps. Prove layout properties, synthesize descriptors and "
        "boxes, fuzz compilers. Every command takes --json. Exit 0 valid, 1 breaks a rule (or no "
        "solution), 2 malformed input, 3 internal error. The contract: docs/CLI.md."))
    top.add_argument("--version", action="version", version=f"layoutproof {__version__}")
    commands = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    for module in COMMAND_MODULES:
        module.register(commands)
    return top


def one_line(text: str) -> str:
    return " ".join(str(text).split("\n"))


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return args.run(args)
    except UsageError as error:
        print(one_line(error), file=sys.stderr)
        return EXIT_MALFORMED
    except ValueError as error:          # SpecError and the commands' own input errors
        if os.environ.get("LAYOUTPROOF_DEBUG") and not isinstance(error, SpecError):
            raise
        print(f"layoutproof: error: {one_line(error)}", file=sys.stderr)
        return EXIT_MALFORMED
    except BrokenPipeError:
        return EXIT_OK
    except Exception as error:  # never a traceback for users; LAYOUTPROOF_DEBUG=1 shows it
        if os.environ.get("LAYOUTPROOF_DEBUG"):
            raise
        print(f"layoutproof: internal error: {type(error).__name__}: {one_line(error)}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
