"""Every command has a Python function (layoutproof.commands) whose typed result's to_json() is the
command's --json output (issue 29).

Each sample gives the function's keywords and, written out by hand, the command line that means the
same: the command line runs in a fresh process (`python -m layoutproof`), so the keyword-to-flag
translation and the in-process run are both checked against what a user's script sees.
"""
from __future__ import annotations

import argparse
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import subprocess
import sys

import pytest

from layoutproof import commands, results
from solver.cli.main import build_parser

ROOT = ROOT_DIR
TILE = "Sw<3,4,3> o ((8,8),64):((64,512),1)"

# (function, keywords, the same command line)
SAMPLES = [
    ("desc_decode", dict(arch="sm90", descriptor="0x4000004000010040"),
     "desc decode --arch sm90 0x4000004000010040"),
    ("desc_decode", dict(arch="sm100", descriptor="0x4000004000010047"),
     "desc decode --arch sm100 0x4000004000010047"),
    ("desc_encode", dict(arch="sm90", smem_address=0x400, lbo=16, sbo=1024, swizzle="128B"),
     "desc encode --arch sm90 --smem-address 0x400 --lbo 16 --sbo 1024 --swizzle 128B"),
    ("desc_addresses", dict(arch="sm90", descriptor="0x4000004000010040", dtype="bf16", major="K", mn=8),
     "desc addresses --arch sm90 0x4000004000010040 --dtype bf16 --major K --mn 8"),
    ("synth", dict(arch="sm90", dtype="bf16", major="K", mn=64, layout=TILE, smem_address=0x400),
     f"synth --arch sm90 --dtype bf16 --major K --mn 64 --layout '{TILE}' --smem-address 0x400"),
    ("synth", dict(arch="sm90", dtype="bf16", major="K", mn=64, layout=TILE, smem_address=0x410),
     f"synth --arch sm90 --dtype bf16 --major K --mn 64 --layout '{TILE}' --smem-address 0x410"),
    ("check", dict(descriptor="0x4000004000010042", arch="sm90", dtype="bf16", major="K", mn=64, layout=TILE,
                   smem_address=0x400, k_offset=16),
     f"check 0x4000004000010042 --arch sm90 --dtype bf16 --major K --mn 64 --layout '{TILE}' "
     "--smem-address 0x400 --k-offset 16"),
    ("check", dict(descriptor="0x4000004000010040", arch="sm90", dtype="bf16", major="K", mn=64, layout=TILE,
                   smem_address=0x400, k_offset=16),
     f"check 0x4000004000010040 --arch sm90 --dtype bf16 --major K --mn 64 --layout '{TILE}' "
     "--smem-address 0x400 --k-offset 16"),
    ("recipe", dict(arch="sm90", dtype="bf16", major="K", mn=128, k_tile=64, swizzle="128B", smem_address=0x400,
                    instr=(128, 64)),
     "recipe --arch sm90 --dtype bf16 --major K --mn 128 --k-tile 64 --swizzle 128B --smem-address 0x400 --instr 128,64"),
    ("recipe", dict(arch="sm100", dtype="bf16", major="K", mn=128, k_tile=64, swizzle="128B", smem_address=0x410),
     "recipe --arch sm100 --dtype bf16 --major K --mn 128 --k-tile 64 --swizzle 128B --smem-address 0x410"),
    ("tma_check", dict(tensormap="examples/tensormap_tiled_bf16.json", arch="sm90"),
     "tma check --tensormap examples/tensormap_tiled_bf16.json --arch sm90"),
    ("tma_schema", dict(), "tma schema"),
    ("tma_place", dict(swizzle="128B", dtype="bf16", box=(64, 2), smem_address=0x400),
     "tma place --swizzle 128B --dtype bf16 --box 64,2 --smem-address 0x400"),
    ("tma_box", dict(dtype="f16", rows=64, inner=64, global_dim=(1024, 1024), global_strides=(2048,), arch="sm90"),
     "tma box --dtype f16 --rows 64 --inner 64 --global-dim 1024,1024 --global-strides 2048 --arch sm90"),
    ("tmem_check", dict(arch="sm_100a", ptx="tcgen05.ld.sync.32x32b.x2.b32 {%r1, %r2}, [%r0]"),
     "tmem check --arch sm_100a --ptx 'tcgen05.ld.sync.32x32b.x2.b32 {%r1, %r2}, [%r0]'"),
    ("tmem_ld", dict(shape="32x32b", num="x4", lane=32, column=0, warp=0, arch="sm_100a"),
     "tmem ld --shape 32x32b --num x4 --lane 32 --column 0 --warp 0 --arch sm_100a"),
    ("tmem_st", dict(shape="16x64b", num="x2", lane=0, column=8, warp=1, arch="sm_100a"),
     "tmem st --shape 16x64b --num x2 --lane 0 --column 8 --warp 1 --arch sm_100a"),
    ("tmem_cp", dict(shape="64x128b", multicast="warpx2::02_13"), "tmem cp --shape 64x128b --multicast warpx2::02_13"),
    ("tmem_shift", dict(lane=0, arch="sm100"), "tmem shift --lane 0 --arch sm100"),
    ("tmem_alloc", dict(ops="examples/tmem_alloc_leak.json"), "tmem alloc --ops examples/tmem_alloc_leak.json"),
    ("tmem_map", dict(op="st", shape="32x32b", num="x2"), "tmem map --op st --shape 32x32b --num x2"),
    ("tmem_plan", dict(m=64, n=16, dtype="f32", at=(17, 3)), "tmem plan --m 64 --n 16 --dtype f32 --at 17,3"),
    ("scales_map", dict(sf_layout="linear-k", mn=2, k=64, sf_block=32),
     "scales map --sf-layout linear-k --mn 2 --k 64 --sf-block 32"),
    ("scales_check", dict(sf_layout="linear-k", kind="mxf4nvf4", scale_vec="block16", mn=128, k=512),
     "scales check --sf-layout linear-k --kind mxf4nvf4 --scale-vec block16 --mn 128 --k 512"),
    ("scales_plan", dict(kind="mxf8f6f4", m=128, n=128, k=128), "scales plan --kind mxf8f6f4 --m 128 --n 128 --k 128"),
    ("im2col", dict(mode="im2col", tensor=(16, 4, 4, 1), lower=(0, 0), upper=(-1, -1), channels_per_pixel=16,
                    pixels_per_column=4, coords=(0, 0, 0, 0), elem_bytes=2, swizzle="NONE", smem_address=0x400),
     "im2col --mode im2col --tensor 16,4,4,1 --lower=0,0 --upper=-1,-1 --channels-per-pixel 16 "
     "--pixels-per-column 4 --coords 0,0,0,0 --elem-bytes 2 --swizzle NONE --smem-address 0x400"),
    ("prove", dict(ids=["k48.contained"]), "prove k48.contained --no-save"),
    # proved, so no counterexample: what Z3 picks may depend on the queries made before in a process
    ("prove", dict(layout="Sw<3,4,3> o (64,64):(64,1)", dtype="bf16", ids=["injective"]),
     "prove --layout 'Sw<3,4,3> o (64,64):(64,1)' --dtype bf16 injective"),
    ("rules", dict(ids=["desc.sm90.layout"]), "rules desc.sm90.layout"),
    ("fuzz", dict(target="tmem", arch="sm100", violate="tmem.access.lane_quarter", count=1, seed=1),
     "fuzz --target tmem --arch sm100 --violate tmem.access.lane_quarter --count 1 --seed 1"),
    ("ptx_descriptors", dict(file="tests/fixtures/ptx/handwritten_wgmma.ptx"),
     "ptx descriptors tests/fixtures/ptx/handwritten_wgmma.ptx"),
    ("ptx_check", dict(file="tests/fixtures/ptx/triton_wgmma_f16_sw128.ptx",
                       layout=["B=Sw<3,4,3> o (64,64):(64,1)"]),
     "ptx check tests/fixtures/ptx/triton_wgmma_f16_sw128.ptx --layout 'B=Sw<3,4,3> o (64,64):(64,1)'"),
    ("audit", dict(file=["examples/audit/triton_tma_gemm_sm90.ptx"],
                   tensormap=["0=examples/audit/triton_tma_gemm_a.json", "5=examples/audit/triton_tma_gemm_b.json",
                              "10=examples/audit/triton_tma_gemm_c.json"],
                   param={"matmul_kernel_tma_param_15": 512, "matmul_kernel_tma_param_16": 512,
                          "matmul_kernel_tma_param_17": 256}),
     "audit examples/audit/triton_tma_gemm_sm90.ptx --tensormap 0=examples/audit/triton_tma_gemm_a.json "
     "--tensormap 5=examples/audit/triton_tma_gemm_b.json --tensormap 10=examples/audit/triton_tma_gemm_c.json "
     "--param matmul_kernel_tma_param_15=512 --param matmul_kernel_tma_param_16=512 "
     "--param matmul_kernel_tma_param_17=256"),
]


def _untimed(document):
    """The document without what differs between two runs of one proof: prove's "seconds", wherever."""
    if isinstance(document, dict):
        return {k: _untimed(v) for k, v in document.items() if k != "seconds"}
    if isinstance(document, list):
        return [_untimed(v) for v in document]
    return document


def _leaf_commands(parser, path=()):
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not found:
        yield path
        return
    for name, sub in found[0].choices.items():
        yield from _leaf_commands(sub, path + (name,))


def test_every_command_has_a_function_and_a_sample():
    leaves = set(_leaf_commands(build_parser()))
    assert {words for words, _ in commands.COMMANDS.values()} == leaves
    assert {name for name, _, _ in SAMPLES} == set(commands.COMMANDS)


@pytest.fixture(scope="module")
def command_line_json():
    """The JSON each sample's command line prints, from one fresh process for all of them."""
    script = ("import json, shlex, sys, io, contextlib\n"
              "from solver.cli.main import main\n"
              "out = []\n"
              "for line in json.load(sys.stdin):\n"
              "    buffer = io.StringIO()\n"
              "    with contextlib.redirect_stdout(buffer):\n"
              "        status = main(shlex.split(line) + ['--json'])\n"
              "    out.append([status, buffer.getvalue()])\n"
              "print(json.dumps(out))\n")
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps([line for _, _, line in SAMPLES]),
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("index", range(len(SAMPLES)), ids=[f"{s[0]}-{i}" for i, s in enumerate(SAMPLES)])
def test_the_function_gives_the_command_lines_json(index, command_line_json, monkeypatch):
    name, keywords, line = SAMPLES[index]
    status, printed = command_line_json[index]
    monkeypatch.chdir(ROOT)
    result = getattr(commands, name)(**keywords)
    expected = json.loads(printed)
    assert result.exit_status == status
    assert _untimed(result.to_json()) == _untimed(expected)
    _, result_class = commands.COMMANDS[name]
    assert isinstance(result, result_class)
    if isinstance(expected, dict):
        untyped = set(expected) - result_class.json_keys() if result_class.json_keys() else set()
        assert not untyped, f"{name}: keys with no field in {result_class.__name__}: {sorted(untyped)}"
        for key, value in expected.items():
            if key in result_class.json_keys() and key != "ok":
                assert _untimed({key: getattr(result, results._RENAMED.get(key, key))}) == _untimed({key: value})
        if "ok" in expected:
            assert result.ok == expected["ok"]


def test_malformed_keywords_raise_naming_the_flag():
    with pytest.raises(ValueError, match="did you mean dtype"):
        commands.recipe(arch="sm90", dtyp="bf16")
    with pytest.raises(ValueError, match="arch"):
        commands.desc_decode(arch="sm09", descriptor="0x1")


def test_help_shows_the_flags():
    import inspect
    signature = inspect.signature(commands.check)
    assert "smem_address" in signature.parameters and "k_offset" in signature.parameters
    assert signature.parameters["descriptor"].default is inspect.Parameter.empty
    assert "--k-offset" not in commands.check.__doc__ and "k_offset:" in commands.check.__doc__


@pytest.mark.parametrize("name, keywords", [
    ("prove", dict(list=True)),
    ("fuzz", dict(coverage=True, target="tmem-alloc")),
    ("synth", dict(arch="sm90", dtype="bf16", major="K", mn=64, layout=TILE, smem_address=0x400, all=True)),
    ("desc_addresses", dict(arch="sm90", descriptor="0x4000004000010040", dtype="bf16", major="K", mn=8, map=True)),
    ("tmem_cp", dict(shape="128x256b", cta_group=2)),
    ("scales_plan", dict(kind="mxf4nvf4", m=128, n=128, k=64, sf_block=16)),
], ids=lambda value: value if isinstance(value, str) else "")
def test_other_forms_of_a_command_are_typed_too(name, keywords, monkeypatch):
    """The keys a command's other forms add (--list, --coverage, --all, --map, a peer CTA) have fields."""
    monkeypatch.chdir(ROOT)
    result = getattr(commands, name)(**keywords)
    _, result_class = commands.COMMANDS[name]
    assert set(result.to_json()) - result_class.json_keys() == set()
