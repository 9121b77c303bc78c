"""Every `layoutproof` command as a Python function: the command line's flags as keyword arguments, a
typed result back (layoutproof.results), whose `.to_json()` is the document the command prints with
--json.

    from layoutproof import commands as lpc
    r = lpc.recipe(arch="sm90", dtype="bf16", major="K", mn=128, k_tile=64, swizzle="128B", smem_address=0x400)
    r.ok, r.exit_status            # True, 0: what the command's exit status says
    r.mma["slices"][1]["rows"]     # [64, 127]: warpgroup 1's rows
    r.to_json()                    # == json.loads(`layoutproof recipe ... --json`)

A keyword is a flag's name with underscores (`smem_address` for --smem-address, `k_offset` for
--k-offset); a positional argument is named as in `--help` (`descriptor`, `file`, `ids`). Values are
Python values: numbers, True for a switch, a list or tuple for a list (`box=(64, 8)`) or a repeated flag
(`param=["M=128", "N=256"]`, or a dict {"M": 128}). The command's own parser reads them, so a function
accepts exactly what the command accepts and refuses the same way: malformed input raises
spec.rule.SpecError (a ValueError naming the field and the rule) with the command's one-line message.

Each call runs the command in this process, with its standard output captured: not thread-safe.
`help(lpc.recipe)` shows the flags, from the parser itself.
"""
from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import json
import re

from layoutproof import results

# {function name: (the command's words, its result class)}: one entry per command the parser has
# (tests/cli_tests/test_api_commands.py checks that none is missing).
COMMANDS = {
    "desc_decode": (("desc", "decode"), results.DescDecode),
    "desc_encode": (("desc", "encode"), results.DescEncode),
    "desc_addresses": (("desc", "addresses"), results.DescAddresses),
    "synth": (("synth",), results.Synth),
    "check": (("check",), results.Check),
    "recipe": (("recipe",), results.Recipe),
    "tma_check": (("tma", "check"), results.TmaCheck),
    "tma_schema": (("tma", "schema"), results.TmaSchema),
    "tma_place": (("tma", "place"), results.TmaPlace),
    "tma_box": (("tma", "box"), results.TmaBox),
    "tmem_check": (("tmem", "check"), results.TmemCheck),
    "tmem_ld": (("tmem", "ld"), results.TmemAccess),
    "tmem_st": (("tmem", "st"), results.TmemAccess),
    "tmem_cp": (("tmem", "cp"), results.TmemCp),
    "tmem_shift": (("tmem", "shift"), results.TmemShift),
    "tmem_alloc": (("tmem", "alloc"), results.TmemAlloc),
    "tmem_map": (("tmem", "map"), results.TmemMap),
    "tmem_plan": (("tmem", "plan"), results.TmemPlan),
    "scales_map": (("scales", "map"), results.ScalesMap),
    "scales_check": (("scales", "check"), results.ScalesCheck),
    "scales_plan": (("scales", "plan"), results.ScalesPlan),
    "im2col": (("im2col",), results.Im2col),
    "prove": (("prove",), results.Prove),
    "rules": (("rules",), results.Rules),
    "fuzz": (("fuzz",), results.Fuzz),
    "ptx_descriptors": (("ptx", "descriptors"), results.PtxDescriptors),
    "ptx_check": (("ptx", "check"), results.PtxCheck),
    "audit": (("audit",), results.Audit),
}

_OUTPUT_FLAGS = ("--json", "--pretty", "-h")


def command_parser(words: tuple):
    """The argparse parser of the command `words` (only its module is imported)."""
    from solver.cli.main import COMMANDS as MODULES, build_parser
    parser = build_parser((MODULES[words[0]],))
    for word in words:
        commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = commands[0].choices[word]
    return parser


def _python_name(action) -> str:
    """The keyword of an action: a positional's dest, else its first (canonical) flag without dashes."""
    if not action.option_strings:
        return action.dest
    return action.option_strings[0].lstrip("-").replace("-", "_")


def _arguments(parser) -> dict:
    """{keyword: action} of every argument a caller may give (not --json, --pretty, --help)."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or any(s in _OUTPUT_FLAGS for s in action.option_strings) \
                or action.dest == "help":
            continue
        found[_python_name(action)] = action
    return found


def _older_keywords(parser) -> dict:
    """{keyword: action} of the older spellings a command still takes (start_address for --smem-address)."""
    return {spelling.lstrip("-").replace("-", "_"): action for action in parser._actions
            for spelling in action.option_strings[1:] if spelling.startswith("--")}


def _words_of(value) -> list:
    """A value as the command line spells it: numbers in decimal, lists comma-separated."""
    if isinstance(value, bool):
        raise TypeError("a switch takes True or False")
    if isinstance(value, (list, tuple)):
        return [",".join(str(v) for v in value)]
    return [str(value)]


def argv_of(words: tuple, parser, options: dict) -> list:
    """The command line that `options` (keyword -> Python value) spell for this command."""
    from spec.rule import SpecError
    known = _arguments(parser)
    older = _older_keywords(parser)
    argv = list(words)
    positional = []
    for name, value in options.items():
        action = known.get(name) or older.get(name)
        if action is None:
            from solver.shell import did_you_mean
            raise SpecError(name, value, f"{' '.join(words)} takes no such argument{did_you_mean(name, known)}; "
                            f"it takes {', '.join(sorted(known))}")
        if value is None or value is False:
            continue
        if not action.option_strings:
            positional += [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
            continue
        flag = action.option_strings[0]
        if action.nargs == 0:                       # a switch: store_true, --version-like actions
            argv.append(flag)
        elif isinstance(action, argparse._AppendAction):
            items = [f"{k}={v}" for k, v in value.items()] if isinstance(value, dict) else \
                (list(value) if isinstance(value, (list, tuple)) else [value])
            argv += [f"{flag}={item}" for item in items]
        else:           # --flag=value: a value that begins with '-' (--upper=-1,-1) stays the flag's
            argv.append(f"{flag}={_words_of(value)[0]}")
    # positionals after "--", so that one beginning with "-" is not read as a flag
    return argv + (["--"] + positional if positional else [])


def run(words: tuple, result_class=None, **options):
    """Run the command `words` ("recipe", or "tma", "place") with these options; its typed result."""
    from solver.cli.main import main
    words = tuple(words)
    parser = command_parser(words)
    argv = list(words) + ["--json"] + argv_of(words, parser, options)[len(words):]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    if status == 2:
        from spec.rule import SpecError
        line = err.getvalue().strip().split("error: ", 1)[-1] or "malformed input"
        # the command line's flags, as this function's keywords: "--smem-address" -> "smem_address"
        line = re.sub(r"(?<![\w-])--([a-z0-9][a-z0-9-]*)", lambda m: m.group(1).replace("-", "_"), line)
        raise SpecError("command", " ".join(words), line)
    if status not in (0, 1):
        raise RuntimeError(err.getvalue().strip() or f"{' '.join(words)} exited {status}")
    document = json.loads(out.getvalue())
    result_class = result_class or results.CommandResult
    return result_class.from_document(" ".join(words), status, document)


def _make(name: str, words: tuple, result_class):
    def command(**options):
        return run(words, result_class, **options)
    parser = command_parser(words)
    parameters = [inspect.Parameter(keyword, inspect.Parameter.KEYWORD_ONLY,
                                    default=inspect.Parameter.empty if action.required else action.default)
                  for keyword, action in _arguments(parser).items()]
    parameters.sort(key=lambda p: p.default is not inspect.Parameter.empty)     # required first
    command.__signature__ = inspect.Signature(parameters, return_annotation=result_class)
    flags = "\n".join(f"    {keyword}: {(action.help or '').replace('%%', '%')}"
                      for keyword, action in _arguments(parser).items())
    command.__doc__ = (f"`layoutproof {' '.join(words)}` as a function: {parser.description or ''}\n\n"
                       f"Keywords (the flags):\n{flags}\n\nReturns {result_class.__name__} "
                       f"(layoutproof.results); .to_json() is the --json document.")
    command.__name__ = command.__qualname__ = name
    return command


def __getattr__(name: str):
    """The function of a command, made on first use (each builds its command's parser)."""
    if name in COMMANDS:
        words, result_class = COMMANDS[name]
        globals()[name] = function = _make(name, words, result_class)
        return function
    raise AttributeError(f"module 'layoutproof.commands' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(COMMANDS))
