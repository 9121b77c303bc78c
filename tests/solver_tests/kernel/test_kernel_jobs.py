"""analyse(jobs=N) and `ptx descriptors --jobs N`: the functions of a file evaluated in forked processes
give what one process gives (solver/kernel/analysis.py evaluated: nothing a function's evaluation reads is
another's), with the sites in the file's order."""
import json
import lzma
import re

import pytest

from repo_paths import ROOT
from spec.rule import SpecError
from solver.cli.ptx import descriptors_document
from solver.kernel import analysis

CORPUS = ROOT / "tests" / "fixtures" / "ptx" / "corpus" / "triton"
# three kernels whose runs differ (a plain loop, a persistent one, a warp-specialized one), renamed apart
KERNELS = ("tut09_tma_f16_128x256x64_s3_w8_sm_90a.ptx.xz", "tut09_persistent_f16_128x128x64_s3_w8_sm_90a.ptx.xz",
           "tut09_tma_persistent_ws_f16_128x128x64_s3_w8_sm_90a.ptx.xz")


def _module() -> str:
    pieces = [".version 8.7\n.target sm_90a\n.address_size 64\n"]
    for k, name in enumerate(KERNELS):
        text = lzma.open(CORPUS / name, "rt").read()
        text = re.sub(r"^\s*\.(version|target|address_size)\b[^\n]*", "", text, flags=re.M)
        pieces.append(re.sub(r"\.entry\s+", f".entry k{k}_", text))
    return "\n".join(pieces)


def _document(result) -> str:
    return json.dumps(descriptors_document(result), sort_keys=True, default=str)


def test_forked_functions_give_what_one_process_gives():
    text = _module()
    one = analysis.analyse(text)
    forked = analysis.analyse(text, jobs=3)
    assert len(one.functions) == len(KERNELS) and one.functions == forked.functions
    assert [(s.function, s.line) for s in forked.sites] == [(s.function, s.line) for s in one.sites]
    assert one.sites, "the kernels hold MMA sites"
    assert _document(forked) == _document(one)
    assert forked.iterations.keys() == one.iterations.keys() and forked.any_launch == one.any_launch


def test_jobs_are_checked():
    with pytest.raises(Exception, match="jobs"):
        analysis.analyse(_module(), jobs=0)


TCGEN05 = ROOT / "tests" / "fixtures" / "ptx" / "handwritten_tcgen05.ptx"
# two MMAs of handwritten_tcgen05.ptx, one in each of its functions, and the form ptxas refuses (no cta_group)
REFUSED = {"tcgen05.mma.cta_group::1.kind::f16 [%r10], %rd1, %rd2, %r20, %p1;":
           "tcgen05.mma.kind::f16 [%r10], %rd1, %rd2, %r20, %p1;",
           "tcgen05.mma.cta_group::2.kind::f16 [%r10], %rd1, %rd2, 0x10200490, %p1;":
           "tcgen05.mma.kind::f16 [%r10], %rd1, %rd2, 0x10200490, %p1;"}


def _refused(count: int) -> str:
    """handwritten_tcgen05.ptx with the first `count` MMAs of REFUSED made the refused form."""
    text = TCGEN05.read_text()
    for good, bad in list(REFUSED.items())[:count]:
        assert good in text
        text = text.replace(good, bad, 1)
    return text


def _errors_with_1_and_2_jobs(capsys, monkeypatch, text: str) -> list:
    """`ptx descriptors -` on the text with --jobs 1 and 2: each exits 2 with one line, naming line 39 (the
    first refused MMA in file order); their errors."""
    import io
    from solver.cli import main as cli
    errors = []
    for jobs in ("1", "2"):
        monkeypatch.setattr("sys.stdin", io.StringIO(text))
        rc = cli.main(["ptx", "descriptors", "-", "--block", "128", "--jobs", jobs])
        out, err = capsys.readouterr()
        assert rc == 2 and out == "" and err.count("\n") == 1 and "line 39" in err, (jobs, rc, err)
        errors.append(err)
    return errors


def test_malformed_input_in_a_forked_function_is_one_line_and_exit_2(capsys, monkeypatch):
    """An MMA ptxas refuses is found while its function is evaluated, here in a worker process: the error
    comes back whole (spec.rule.SpecError pickles as its fields) and is the one line of one process."""
    errors = _errors_with_1_and_2_jobs(capsys, monkeypatch, _refused(1))
    assert errors[0] == errors[1]


def test_each_function_is_read_in_the_process_that_evaluates_it(monkeypatch):
    """With jobs, the functions are read apart (source.parse_apart: each in the worker that evaluates it,
    and sent back with its result), never by source.parse; the Analysis keeps the module parse() gives."""
    from solver.kernel.frontend import source
    text = _module()
    whole = source.parse(text)
    one = analysis.analyse(text)

    def refuse(_text):
        raise AssertionError("source.parse called: the module was not read apart")
    monkeypatch.setattr(source, "parse", refuse)
    forked = analysis.analyse(text, jobs=2)
    assert forked.module == whole and _document(forked) == _document(one)


def test_a_body_the_fast_reader_declines_is_read_whole_with_the_same_result():
    """A comment inside a statement: the fast reader declines that body, so the module is read by the
    grammar in this process (analysis._read_whole), and the functions still evaluated in workers."""
    text = _module()
    declined = text.replace("\tret;", "\tret /* a comment { inside */;", 1)
    assert declined != text
    from solver.kernel.frontend import source
    apart = source.parse_apart(declined)
    assert apart is not None and None in [apart.function(k) for k in range(len(apart.names))]
    assert _document(analysis.analyse(declined, jobs=2)) == _document(analysis.analyse(declined))


def test_a_function_over_the_limit_gives_the_error_of_one_process(monkeypatch):
    """The limits of reading are parse()'s, and so is the error, although a worker reads the function:
    the reading errors are raised in file order, before any evaluation error."""
    from solver.kernel.frontend import source
    text = _module()
    sizes = [len(f.statements) for f in source.parse(text).functions]
    assert min(sizes) < max(sizes) - 1
    monkeypatch.setattr(source, "MAX_STATEMENTS", max(sizes) - 1)       # the longest function is over it
    errors = []
    for jobs in (1, 3):
        with pytest.raises(SpecError) as raised:
            analysis.analyse(text, jobs=jobs)
        errors.append(str(raised.value))
    assert errors[0] == errors[1] and f"{max(sizes) - 1} statements read per function" in errors[0]


def test_two_malformed_functions_give_the_first_in_file_order(capsys, monkeypatch):
    """Both functions hold an MMA ptxas refuses; each is found in its own worker. The error is the first in
    file order, the one of one process, whichever worker finishes first."""
    errors = _errors_with_1_and_2_jobs(capsys, monkeypatch, _refused(2))
    assert errors[0] == errors[1]
