"""Every command example in README.md and in every docs/*.md (CLI.md, GUIDE.md, TUTORIALS.md, EVIDENCE.md,
...) is run, and its output compared with the text; so is every ```python block that runs as written.

An example is a fenced block whose lines start with `$ layoutproof ...` (a trailing backslash
continues the command on the next line); the lines up to the next `$` line or the end of the block are
the output the command prints on stdout. In the expected text `...` stands for any text (possibly
none, possibly several lines), a run of spaces or line breaks matches any run of whitespace, so
that a long JSON line may be folded for reading, and a decimal fraction (`0.10`: only timings are
printed with a fraction) matches any decimal fraction.

Each example runs as a reader would run it: `python -m layoutproof ...` in a fresh process from the
repository root (so the documents under examples/ resolve, and no state of an earlier command, such
as Z3's, can change what a later one prints).
"""
from __future__ import annotations

import glob
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from once import RUN_MANY, once_per_run

ROOT = ROOT_DIR
DOCUMENTS = ("README.md",) + tuple(sorted(os.path.relpath(path, ROOT)
                                           for path in glob.glob(os.path.join(ROOT, "docs", "*.md"))))


def _blocks(text: str):
    inside, lines, start = False, [], 0
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            if inside:
                yield start, lines
            inside, lines, start = not inside, [], number + 1
        elif inside:
            lines.append(line)


def _python_blocks(document: str):
    """The document's ```python blocks that run as written (no placeholder `...`, no user's compiler)."""
    with open(os.path.join(ROOT, document)) as handle:
        text = handle.read()
    for match in re.finditer(r"```python\n(.*?)```", text, re.DOTALL):
        code = match.group(1)
        if "..." not in code and "my_compiler" not in code:
            yield pytest.param(code, id=f"{document}:{text[:match.start()].count(chr(10)) + 1}")


def _examples(document: str):
    with open(os.path.join(ROOT, document)) as handle:
        text = handle.read()
    for start, lines in _blocks(text):
        index = 0
        while index < len(lines):
            if not lines[index].startswith("$ layoutproof "):
                index += 1
                continue
            line_number = start + index
            command = lines[index][2:]
            while command.endswith("\\"):
                index += 1
                command = command[:-1] + " " + lines[index].strip()
            index += 1
            output = []
            while index < len(lines) and not lines[index].startswith("$ "):
                output.append(lines[index])
                index += 1
            yield pytest.param(command, "\n".join(output), id=f"{document}:{line_number}")


def _pattern(expected: str) -> re.Pattern:
    pieces = []
    for token in re.split(r"(\.\.\.|\s+|\d+\.\d+)", expected.strip()):
        if token == "...":
            pieces.append(r".*?")
        elif re.fullmatch(r"\d+\.\d+", token or ""):
            pieces.append(r"\d+\.\d+")
        elif token and token.isspace():
            pieces.append(r"\s+")
        elif token:
            pieces.append(re.escape(token))
    return re.compile("".join(pieces), re.DOTALL)


EXAMPLES = [example for document in DOCUMENTS for example in _examples(document)]


def test_the_documents_have_examples():
    documents = {example.id.split(":")[0] for example in EXAMPLES}
    assert documents == set(DOCUMENTS)


# Each example that runs Z3 (prove, audit) runs in a fresh process, so that no earlier query can change
# the counterexample it prints; the others run together in one interpreter (its start-up paid once).
FRESH = ("layoutproof prove", "layoutproof audit")


@pytest.fixture(scope="module")
def printed_together(tmp_path_factory) -> dict:
    """{command: what it printed} of the examples outside FRESH, run once per test run (tests/once.py)."""
    def run_all():
        lines = sorted({command for command, _ in (e.values for e in EXAMPLES) if not command.startswith(FRESH)})
        done = subprocess.run([sys.executable, "-c", RUN_MANY], input=json.dumps(lines), cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        return {line: out for line, (_, out, _) in zip(lines, json.loads(done.stdout))}
    return once_per_run(tmp_path_factory, "docs_examples", run_all)


@pytest.mark.parametrize("command, expected", EXAMPLES)
def test_example_prints_what_the_document_shows(command, expected, printed_together):
    if command.startswith(FRESH):
        argv = [sys.executable, "-m", "layoutproof"] + shlex.split(command)[1:]
        printed = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120).stdout.strip()
    else:
        printed = printed_together[command].strip()
    assert _pattern(expected).fullmatch(printed), f"{command}\n--- printed ---\n{printed}"


def test_the_readme_has_runnable_python():
    assert list(_python_blocks("README.md"))


@pytest.mark.parametrize("code", [block for document in DOCUMENTS for block in _python_blocks(document)])
def test_python_example_runs(code):
    exec(compile(code, "<python block of a document>", "exec"), {})


def _synopses():
    """(command words, flags) of each synopsis line of docs/CLI.md: `layoutproof <words> ...`."""
    with open(os.path.join(ROOT, "docs", "CLI.md")) as handle:
        for line in handle:
            match = re.match(r"`layoutproof ([a-z0-9 ]+?) (?=[-\[A-Z`])(.*?)`", line)
            if match:
                yield pytest.param(tuple(match.group(1).split()), set(re.findall(r"--[a-z][a-z0-9-]*", match.group(2))),
                                   id=match.group(1))


def _subparser(words):
    from solver.cli.main import build_parser
    parser = build_parser()
    for word in words:
        action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        parser = action.choices[word]
    return parser


@pytest.mark.parametrize("words, flags", list(_synopses()))
def test_docs_synopsis_names_exactly_the_command_options(words, flags):
    """docs/CLI.md is kept true: every flag a synopsis names exists, and every flag the command takes is
    named in one of the synopses of that command (deprecated spellings aside)."""
    actions = _subparser(words)._actions
    options = {s for a in actions for s in a.option_strings if s.startswith("--")}
    assert flags <= options, flags - options
    # each flag by its name; an older spelling (listed in `--help` and the vocabulary table) need not be
    current = {a.option_strings[0] for a in actions if a.option_strings and a.option_strings[0].startswith("--")}
    documented = set().union(*[set(f) for w, f in ((p.values[0], p.values[1]) for p in _synopses()) if w == words])
    deprecated = {"--no-save", "--counterexamples"}
    assert current - {"--help"} - deprecated <= documented, current - documented
