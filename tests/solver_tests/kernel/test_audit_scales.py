"""audit.scales.path (solver/kernel/audit/scales.py) on Triton's block-scaled GEMMs of the corpus: the
originals are proved (tests/solver_tests/kernel/test_audit_corpus.py), and a bug in any step of the scale path is refuted
with the element that gets another scale. The bugs are written into the PTX here: a k-step's
instruction descriptor swapped for the next one's (scale-factor id 0 <-> 2 of .kind::mxf4, PTX ISA 9.0
9.7.16.10.7.2: the other half word), a scale operand four columns on (the next chunk's copy), and a scale
load at the next K tile (solver.kernel.audit.mutate's coordinate mutant)."""
from __future__ import annotations

import json
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import lzma
import os
import re

import layoutproof as lp
from solver.kernel.audit import mutate

CORPUS = os.path.join(TESTS_DIR, "fixtures", "ptx", "corpus")
ENTRIES = {os.path.basename(e["file"]).split("_")[3]: e
           for e in json.load(open(os.path.join(CORPUS, "audit.json")))["kernels"] if "block_scaled" in e["file"]}


def _text(name: str) -> str:
    return lzma.open(os.path.join(CORPUS, ENTRIES[name]["file"]), "rt").read()


def _scales(name: str, text: str, maps=None):
    entry = ENTRIES[name]
    report = lp.audit(text, maps or entry["tensormaps"], entry["params"], grid=entry["grid"], kernel=entry["kernel"])
    return next(p for k in report.kernels for p in k.properties if p.id == "audit.scales.path")


def _first_mma(lines: list) -> int:
    return next(i for i, line in enumerate(lines) if "block_scale" in line and "tcgen05.mma" in line)


def test_the_corpus_has_the_three_block_scaled_gemms():
    assert set(ENTRIES) == {"mxfp4", "mxfp8", "nvfp4"}


def test_a_swapped_scale_factor_id_is_refuted():
    lines = _text("mxfp4").splitlines()
    i = _first_mma(lines)
    second = next(j for j in range(i + 1, len(lines)) if "block_scale" in lines[j])
    first_idesc = lines[i].split(",")[3].strip()
    other_idesc = lines[second].split(",")[3].strip()
    value = {m.group(1): int(m.group(2)) for m in re.finditer(r"mov\.b32\s+(%r\d+), (\d+);", "\n".join(lines))}
    assert (value[first_idesc] ^ value[other_idesc]) == 2 << 29 | 2 << 4     # ids 0 and 2 of A (bits 29-30) and B
    lines[i] = lines[i].replace(f", {first_idesc},", f", {value[other_idesc]},")   # the next k-step's, as an immediate
    found = _scales("mxfp4", "\n".join(lines))
    assert found.status == "refuted", found.reason
    assert found.witness["operand"] == "A" and found.witness["applied_offset"] != found.witness["expected_offset"]


def test_a_scale_operand_four_columns_on_is_refuted():
    lines = _text("nvfp4").splitlines()
    i = _first_mma(lines)
    operand = re.findall(r"\[ (%r\d+) \+ 0 \]", lines[i])[1]      # [scale-A-tmem] (the first is [d-tmem])
    lines[i] = lines[i].replace(f"[ {operand} + 0 ]", f"[ {operand} + 4 ]", 1)
    found = _scales("nvfp4", "\n".join(lines))
    assert found.status == "refuted", found.reason
    assert found.witness["operand"] == "A"


def test_a_scale_load_at_the_next_k_tile_is_refuted():
    text = _text("nvfp4")
    scale_load = next(i + 1 for i, line in enumerate(text.splitlines()) if "cp.async.bulk.tensor.5d" in line)
    mutant = next(m for m in mutate.mutants(text, ENTRIES["nvfp4"]["tensormaps"], ENTRIES["nvfp4"]["kernel"])
                  if m.kind == "coordinate" and m.line == scale_load and " 2+" in m.name)
    found = _scales("nvfp4", mutant.text, mutant.tensormaps)
    assert found.status == "refuted", (mutant.name, found.reason)


def test_the_affine_offset_is_the_global_elements_offset():
    """affine_offset (solver/fast/kernel_audit_scales.py), the optimised path the check takes, against
    _global_offset (the definition: compose.global_element times the map's strides; offset_by_element) on
    the nvfp4 GEMM's scale map, at loads anywhere."""
    import random
    from types import SimpleNamespace
    from spec.tma import tensormap
    from solver.fast.kernel_audit_scales import affine_offset
    from solver.kernel.audit import scales
    params = tensormap.parse_params(ENTRIES["nvfp4"]["tensormaps"]["block_scaled_matmul_kernel_param_5"])
    rng = random.Random(5)
    for _ in range(200):
        load = SimpleNamespace(coordinates=tuple(rng.randrange(d) for d in params.global_dim))
        index = tuple(rng.randrange(b) for b in params.box_dim)
        assert affine_offset(load, params)(index) == scales._global_offset(load, params, index) == \
            scales.offset_by_element(load, params)(index) == scales.offset_function(load, params)(index)


def test_a_write_between_the_copy_and_the_mma_leaves_the_scale_unknown():
    """A tcgen05.st on the scale's column, an MMA accumulator that spans it, or an MMA whose accumulator
    address is not known, between the copy (tick 10) and the MMA (tick 20): the scale is not the copy's."""
    from types import SimpleNamespace as N
    from solver.kernel.audit import scales

    def copies(stores=(), writes=(), mmas=()):
        return scales._Copies(N(scale_copies=[], tmem_stores=list(stores), tmem_writes=list(writes),
                                scale_mmas=list(mmas), mbarriers=[]))
    assert copies().overwritten(260, 10, 20) is None
    assert copies(stores=[N(tick=15, line=7, cells=frozenset({(3, 260)}))]).overwritten(260, 10, 20)
    assert copies(stores=[N(tick=15, line=7, cells=frozenset({(3, 261)}))]).overwritten(260, 10, 20) is None
    assert copies(stores=[N(tick=15, line=7, cells=None)]).overwritten(260, 10, 20)
    assert copies(stores=[N(tick=25, line=7, cells=None)]).overwritten(260, 10, 20) is None     # after the MMA
    mma = N(tick=15, opcode="tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16",
            idesc=0x08400480)                          # N = 256 (bits 17-22 hold N >> 3 = 32)
    assert copies(writes=[N(tick=15, line=8, address=0)], mmas=[mma]).overwritten(260, 10, 20) is None
    assert copies(writes=[N(tick=15, line=8, address=8)], mmas=[mma]).overwritten(260, 10, 20)
    assert copies(writes=[N(tick=15, line=8, address=None)]).overwritten(260, 10, 20)
    assert copies(writes=[N(tick=15, line=8, address=0)]).overwritten(260, 10, 20)          # extent not known
