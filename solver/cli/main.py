"""The `layoutproof` command line (docs/CLI.md is the contract): builds the parser from the command modules,
runs the command, and turns exceptions into exit statuses.

Every command module defines `register(commands)`, which adds its parsers to the subparsers object
`commands` with `set_defaults(run=<function of args returning the exit status>)`. Every command takes
--json and then prints one JSON document on stdout. Exit status (solver.cli.args): 0 valid / as
expected, 1 well-formed but breaks a rule, 2 malformed input (one line on stderr, naming the field and
the rule), 3 an internal error (one line; LAYOUTPROOF_DEBUG=1 shows the traceback).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import re
import sys

from solver.cli import catalogue
from solver.shell import ERROR_PREFIX, Parser, UsageError, did_you_mean, option_names, usage_error_line

# Exit statuses (solver.cli.args, repeated here so that --help and --version import nothing more)
EXIT_OK, EXIT_VIOLATION, EXIT_MALFORMED, EXIT_INTERNAL = 0, 1, 2, 3

# A run imports only the module of the command it names (start-up is most of a small command's time);
# `--help` and no command need none (solver.cli.catalogue has the summaries); an unknown command builds
# the whole parser, for "did you mean".
COMMAND_MODULES = catalogue.COMMAND_MODULES
COMMANDS = {name: module for name, (module, _) in catalogue.COMMANDS.items()}


class _Version(argparse.Action):
    """--version, with the version looked up only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0,
                         help=help or "show the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from layoutproof._version import __version__
        sys.stdout.write(f"layoutproof {__version__}\n")
        parser.exit()


def build_parser(modules=COMMAND_MODULES) -> Parser:
    """The parser with the commands of `modules` registered; the other commands are named (with their
    summaries, for --help) but take nothing."""
    top = Parser(prog="layoutproof", description=(
        "Formal model and constraint checker for NVIDIA tensor-core memory layouts: shared-memory "
        "descriptors, swizzles, TMA tensor maps. Prove layout properties, synthesize descriptors and "
        "boxes, fuzz compilers. Every command takes --json. Exit 0 valid, 1 breaks a rule (or no "
        "solution), 2 malformed input, 3 internal error. The contract: docs/CLI.md (installed as layoutproof/docs/CLI.md)."))
    top.add_argument("--version", action=_Version)
    commands = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name in modules:
        importlib.import_module(f"solver.cli.{name}").register(commands)
    registered = set(commands.choices)
    for name, (_, summary) in catalogue.COMMANDS.items():
        if name not in registered:
            commands.add_parser(name, help=summary)
    _order(commands)
    return top


def _order(commands) -> None:
    """The commands in catalogue order, however they were registered (so that --help reads the same
    whichever modules were imported)."""
    order = list(catalogue.COMMANDS)
    commands.choices = dict(sorted(commands.choices.items(), key=lambda item: order.index(item[0])))
    commands._choices_actions.sort(key=lambda action: order.index(action.dest))


def _modules_for(argv) -> tuple:
    """The command module `argv` needs: none for --version, --help or no command; all for an unknown one."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words and words[0] in COMMANDS:
        return (COMMANDS[words[0]],)
    if not words or words[0].startswith("-"):
        return ()
    return COMMAND_MODULES


MESSAGE_LIMIT = 299      # an error message is one line of fewer than 300 characters (docs/CLI.md)
EXIT_INTERRUPTED = 130   # Ctrl-C: 128 + SIGINT, as shells report it


def one_line(text) -> str:
    """The message as one line of at most MESSAGE_LIMIT characters (spec.rule.one_line: line breaks
    escaped, a long middle cut out; the start names the field, the end the rule)."""
    from spec.rule import one_line as spec_one_line
    return spec_one_line(text, MESSAGE_LIMIT)


def _error(prefix: str, text) -> None:
    print(one_line(f"{prefix}{text}"), file=sys.stderr)


class OutputError(OSError):
    """Standard output cannot take the answer (a full disk, /dev/full, a closed stream): exit 2 naming
    stdout, as for any other place the command was told to write (issue 25)."""

    def __init__(self, reason: str):
        super().__init__(f"stdout: cannot write the answer: {reason}")


class _GuardedStdout:
    """sys.stdout while a command runs: a write or flush that fails raises OutputError (a broken pipe
    stays BrokenPipeError: the reader has gone, which is no error of ours) and is remembered in
    `failure`, for the writers that swallow it (argparse's --help); everything else is the stream's own."""

    def __init__(self, stream):
        self.stream = stream
        self.failure = None

    def _do(self, action, *arguments):
        try:
            if self.stream is None:                 # `layoutproof ... >&-`: Python leaves sys.stdout None
                raise OSError("standard output is closed")
            return getattr(self.stream, action)(*arguments)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as error:      # ValueError: the stream itself was closed
            self.failure = OutputError(getattr(error, "strerror", None) or str(error))
            raise self.failure from None

    def write(self, text):
        return self._do("write", text)

    def writelines(self, lines):
        return self._do("writelines", lines)

    def flush(self):
        return self._do("flush")

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _discard_stdout() -> None:
    """Point the failed standard output at /dev/null, so that the interpreter's own flush at exit finds
    nothing to fail on (it would print 'Exception ignored' and exit 120)."""
    stream = getattr(sys.stdout, "stream", sys.stdout)      # under _guarded_stdout, the stream it guards
    try:
        descriptor = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
    except (AttributeError, OSError, ValueError):   # not a file (a test's StringIO) or none at all
        return
    try:
        os.dup2(null, descriptor)
    finally:
        os.close(null)


@contextlib.contextmanager
def _guarded_stdout():
    stream = sys.stdout
    sys.stdout = _GuardedStdout(stream)
    try:
        yield
    finally:
        sys.stdout = stream


def _written(status: int) -> int:
    """`status`, once what the command printed has left the buffer (its failure reported now, when it can
    still change the exit status); exit 2 when it cannot be written."""
    guard = sys.stdout
    try:
        guard.flush()
        if guard.failure is not None:               # a write that failed and was swallowed
            raise guard.failure
    except BrokenPipeError:
        _discard_stdout()
    except OutputError as error:
        _discard_stdout()
        if status in (EXIT_OK, EXIT_VIOLATION):     # an exit 2 or 3 has printed its one line already
            _error(ERROR_PREFIX, error)
            return EXIT_MALFORMED
    return status


def main(argv=None) -> int:
    with _guarded_stdout():
        try:
            return _written(_main(argv))
        except KeyboardInterrupt:          # Ctrl-C: quietly, with the status a shell gives an interrupted command
            return EXIT_INTERRUPTED
        except SystemExit as stop:         # --help, --version: their text is written, or exit 2 says why not
            if _written(EXIT_OK) != EXIT_OK:
                raise SystemExit(EXIT_MALFORMED) from None
            raise stop


def _leaf_parser(parser, args):
    """The parser of the command `args` ran (`tma place`'s, not the top one): the one whose options a
    mistyped flag is compared with."""
    while True:
        commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, commands[0].dest, None) if commands else None
        if name is None or name not in commands[0].choices:
            return parser
        parser = commands[0].choices[name]


def _unrecognized(leaf, words) -> UsageError:
    flags = [word.split("=", 1)[0] for word in words if word.startswith("-")]
    hint = did_you_mean(flags[0], option_names(leaf)) if flags else ""
    return UsageError(usage_error_line(leaf, f"unrecognized arguments: {' '.join(words)}{hint}"))


def _unknown_flags(parser, argv) -> tuple:
    """The command's parser named by the words of `argv`, and the --flags in `argv` it does not take
    (abbreviations it would take are taken)."""
    for word in argv:
        commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if commands and word in commands[0].choices:
            parser = commands[0].choices[word]
    if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
        return parser, []               # no command named yet: that is the error to report
    known = option_names(parser)
    # a flag's shape: --name (a value such as --16 is a mistyped number, which its flag reports)
    flags = [word.split("=", 1)[0] for word in argv if re.match(r"--[A-Za-z][\w-]*(=|$)", word)]
    return parser, [flag for flag in flags if not any(name.startswith(flag) for name in known)]


def _parse(parser, argv):
    """parser.parse_args, but an unrecognized flag is reported by the command's own parser, with "did you
    mean" the nearest flag it takes, before the arguments it left out (a mistyped flag is often the
    required one)."""
    try:
        args, extra = parser.parse_known_args(argv)
    except UsageError:
        leaf, unknown = _unknown_flags(parser, list(sys.argv[1:] if argv is None else argv))
        if unknown:
            raise _unrecognized(leaf, unknown) from None
        raise
    if extra:
        raise _unrecognized(_leaf_parser(parser, args), extra)
    return args


def _command_prefix(words: str) -> str:
    """`layoutproof: error: WORDS: `, the start of every error line of a command that has parsed."""
    return ERROR_PREFIX + (f"{words}: " if words else "")


def _without_prefix(text: str, words: str) -> str:
    """A message without the command name it may begin with already (`layoutproof prove: ...`, `fuzz: ...`)."""
    for prefix in (ERROR_PREFIX, f"layoutproof {words}: ", f"{words}: "):
        if words and text.startswith(prefix):
            text = text[len(prefix):]
    return text


def _main(argv) -> int:
    parser = build_parser(_modules_for(argv))
    words = ""
    try:
        args = _parse(parser, argv)
        words = _leaf_parser(parser, args).prog[len("layoutproof"):].strip()
        return args.run(args)
    except UsageError as error:
        if not words:                    # the parser's own line: already in the one format
            _error("", error)
        else:
            _error(_command_prefix(words), _without_prefix(str(error), words))
        return EXIT_MALFORMED
    except OutputError as error:
        _discard_stdout()
        _error(ERROR_PREFIX, error)
        return EXIT_MALFORMED
    except ValueError as error:          # SpecError and the commands' own input errors
        from spec.rule import SpecError
        if os.environ.get("LAYOUTPROOF_DEBUG") and not isinstance(error, SpecError):
            raise
        _error(_command_prefix(words), _without_prefix(str(error), words))
        return EXIT_MALFORMED
    except RecursionError:               # input nested deeper than any legal input is
        if os.environ.get("LAYOUTPROOF_DEBUG"):
            raise
        _error(ERROR_PREFIX, "the input is nested too deeply to be a layout, document or "
                                       "instruction this command reads")
        return EXIT_MALFORMED
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_OK
    except Exception as error:  # never a traceback for users; LAYOUTPROOF_DEBUG=1 shows it
        if os.environ.get("LAYOUTPROOF_DEBUG"):
            raise
        _error(ERROR_PREFIX, f"internal error (a bug: please report it): {type(error).__name__}: {error}")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
