"""One flag vocabulary (issue 29): docs/CLI.md's "Vocabulary" table is checked against every command's
parser, every command takes the shared flags the same way, and no example in the docs or in `--help`
uses an older spelling of a flag.

The parsers are walked, not listed here: a command added later is checked without a change to this file.
"""
from __future__ import annotations

import argparse
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import glob
import io
import os
import re
import shlex
from contextlib import redirect_stderr, redirect_stdout

import pytest

from solver.cli import args as cli_args
from solver.cli.main import build_parser, main

ROOT = ROOT_DIR
DOCUMENTS = [os.path.join(ROOT, "README.md"), *sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))]


def _leaves(parser, path=()):
    """(command words, parser) of every command that runs."""
    commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not commands:
        yield " ".join(path), parser
        return
    for name, sub in commands[0].choices.items():
        yield from _leaves(sub, path + (name,))


LEAVES = dict(_leaves(build_parser()))


def _options(parser):
    return [a for a in parser._actions if a.option_strings and a.dest != "help"]


def _spellings() -> dict:
    """{flag spelling: set of commands that take it}, and {older spelling: its flag} over every parser."""
    taken, older = {}, {}
    for command, parser in LEAVES.items():
        for action in _options(parser):
            for spelling in action.option_strings:
                taken.setdefault(spelling, set()).add(command)
            for alias in action.option_strings[1:]:
                older[alias] = action.option_strings[0]
    return taken, older


def _table() -> dict:
    """docs/CLI.md's vocabulary: {flag: (meaning, commands cell)}."""
    with open(os.path.join(ROOT, "docs", "CLI.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text[text.index("## Vocabulary"):]
    section = section[:section.index("\n## ", 1)]
    rows = re.findall(r"^\| `(--[a-z0-9-]+)` \| (.*?) \| (.*?) \|$", section, re.MULTILINE)
    assert rows, "docs/CLI.md has no vocabulary table"
    return {flag: (meaning, commands) for flag, meaning, commands in rows}


def _commands_cell(commands: set) -> str:
    """How the table writes a set of commands: listed, or 'every command' (less those without it)."""
    if len(commands) <= 20:
        return ", ".join(sorted(commands))
    missing = sorted(set(LEAVES) - commands)
    return "every command" + (" but " + ", ".join(missing) if missing else "")


def test_table_lists_every_shared_flag_and_every_older_spelling():
    taken, older = _spellings()
    table = _table()
    shared = {flag for flag, commands in taken.items() if len(commands) > 1}
    canonical_of_older = set(older.values())
    missing = sorted((shared | set(older) | canonical_of_older) - set(table))
    assert not missing, f"flags missing from docs/CLI.md's vocabulary: {missing}"
    unknown = sorted(set(table) - set(taken))
    assert not unknown, f"the vocabulary names flags no command takes: {unknown}"


@pytest.mark.parametrize("flag", sorted(_table()))
def test_table_row_names_the_commands_that_take_the_flag(flag):
    taken, _ = _spellings()
    cell = _table()[flag][1]
    expected = _commands_cell(taken[flag])
    assert re.sub(r" \(.*?\)", "", cell) == expected, f"{flag}: the table says {cell!r}, the parsers {expected!r}"


def test_every_older_spelling_row_names_its_flag():
    _, older = _spellings()
    table = _table()
    for alias, flag in older.items():
        assert f"older spelling of {flag}" in table[alias][0], \
            f"{alias} is an older spelling of {flag}; its row says {table[alias][0]!r}"


@pytest.mark.parametrize("command", sorted(LEAVES))
def test_every_command_takes_json_and_pretty(command):
    names = {s for a in _options(LEAVES[command]) for s in a.option_strings}
    assert {"--json", "--pretty"} <= names


def test_shared_flags_are_read_alike():
    """The same flag parses the same way in every command: an arch in any spelling, a dtype in PyTorch's,
    an address in hex."""
    for command, parser in LEAVES.items():
        for action in _options(parser):
            name = action.option_strings[0]
            if name == "--arch" and "ptxas target" not in (action.help or ""):
                assert action.type("SM_100A") == "sm100", command
            if name == "--dtype":
                # the name, its cuda.h name (tma box) or its size in bytes (tma place, im2col)
                assert action.type("bfloat16") in ("bf16", "BFLOAT16", 2), command
            if name == "--smem-address":
                assert action.type("0x400") == 1024, command
            if name == "--major":
                assert action.type("mn") == "MN", command


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv, suggestion", [
    (["check", "0x1", "--arch", "sm90", "--strat-address", "3"], "did you mean --start-address?"),
    (["recipe", "--arch", "sm90", "--dtype", "bf61"], "did you mean bf16?"),
    (["desc", "decode", "--arch", "sm09", "0x1"], "did you mean sm90?"),
    (["tma", "place", "--swizzle", "128c"], "did you mean 128B?"),
    (["recipr"], "did you mean recipe?"),
    (["recipe", "--major", "kk"], "did you mean K?"),
])
def test_a_near_miss_gets_did_you_mean_in_the_one_error_format(argv, suggestion):
    status, out, err = _run(argv)
    assert status == 2 and out == ""
    assert err.startswith(cli_args.ERROR_PREFIX) and err.count("\n") == 1, err
    assert suggestion in err, err


def test_older_spellings_give_the_same_answer():
    new = _run(["desc", "encode", "--arch", "sm90", "--smem-address", "0x400", "--lbo", "16", "--sbo", "1024",
                "--swizzle", "128B", "--json"])
    old = _run(["desc", "encode", "--arch", "sm90", "--start-address", "0x400", "--lbo", "16", "--sbo", "1024",
                "--swizzle", "128B", "--json"])
    assert new == old and new[0] == 0


def test_pretty_is_json_indented():
    status, pretty, _ = _run(["desc", "decode", "--arch", "sm90", "0x4000004000010040", "--pretty"])
    _, plain, _ = _run(["desc", "decode", "--arch", "sm90", "0x4000004000010040", "--json"])
    import json
    assert status == 0 and json.loads(pretty) == json.loads(plain) and pretty.count("\n") > 3


def test_tcgen05_commands_refuse_sm90_naming_the_rule():
    status, _, err = _run(["tmem", "plan", "--arch", "sm90", "--m", "128", "--n", "64", "--dtype", "f32"])
    assert status == 2 and "tmem.target" in err


# --- the examples use the vocabulary --------------------------------------------------------------------
def _example_commands():
    """(where, argv) of every `$ layoutproof ...` line in the docs and every `layoutproof ...` example in
    a --help text."""
    for path in DOCUMENTS:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
        for number, line in enumerate(lines, 1):
            if line.startswith("$ layoutproof "):
                command = line[2:]
                follow = number
                while command.endswith("\\") and follow < len(lines):
                    command = command[:-1] + " " + lines[follow]
                    follow += 1
                yield f"{os.path.relpath(path, ROOT)}:{number}", command
    for command_words, parser in LEAVES.items():
        for text in (parser.description or "", parser.epilog or ""):
            for found in re.finditer(r"layoutproof [a-z][^\n`]*", text):
                yield f"{command_words} --help", found.group(0)


def _leaf_of(words):
    for length in (2, 1):
        name = " ".join(words[1:1 + length])
        if name in LEAVES:
            return name
    return None


def test_no_example_uses_an_older_spelling():
    _, older = _spellings()
    found = []
    checked = 0
    for where, command in _example_commands():
        try:
            words = shlex.split(command.split(" | ")[0].split(" > ")[0])
        except ValueError:
            continue
        leaf = _leaf_of(words)
        if leaf is None:
            continue
        checked += 1
        aliases = {s for a in _options(LEAVES[leaf]) for s in a.option_strings[1:]}
        for word in words:
            flag = word.split("=", 1)[0]
            if flag in aliases:
                found.append(f"{where}: {flag} (now {older[flag]})")
    assert checked > 50, f"only {checked} examples found: the search is broken"
    assert not found, "examples using an older spelling:\n" + "\n".join(found)
