"""analyse(jobs=N) and `ptx descriptors --jobs N`: the functions of a file evaluated in forked processes
give what one process gives (solver/kernel/analysis.py evaluated: nothing a function's evaluation reads is
another's), with the sites in the file's order."""
import json
import lzma
import re

import pytest

from repo_paths import ROOT
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


def test_malformed_input_in_a_forked_function_is_one_line_and_exit_2(capsys, monkeypatch):
    """An MMA ptxas refuses is found while its function is evaluated, here in a worker process: the error
    comes back whole (spec.rule.SpecError pickles as its fields) and is the one line of one process."""
    import io
    from solver.cli import main as cli
    text = (ROOT / "tests" / "fixtures" / "ptx" / "handwritten_tcgen05.ptx").read_text()
    bad = text.replace("tcgen05.mma.cta_group::1.kind::f16 [%r10], %rd1, %rd2, %r20, %p1;",
                       "tcgen05.mma.kind::f16 [%r10], %rd1, %rd2, %r20, %p1;", 1)
    assert bad != text
    errors = []
    for jobs in ("1", "2"):
        monkeypatch.setattr("sys.stdin", io.StringIO(bad))
        rc = cli.main(["ptx", "descriptors", "-", "--block", "128", "--jobs", jobs])
        out, err = capsys.readouterr()
        assert rc == 2 and out == "" and err.count("\n") == 1 and "line 39" in err, (jobs, rc, err)
        errors.append(err)
    assert errors[0] == errors[1]
