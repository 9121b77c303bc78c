"""`recipe --emit cuda|cute|triton` (solver/synth/recipe_emit.py, issue 29).

The expectations come from an oracle written here from the manuals, not from the emitter:
  * where a TMA box writes element (mn, k): PTX ISA 5.5.3 (a tiled box is dense, d0 fastest; boxes of a
    tile back to back) and 5.5.7 (the swizzle XORs address bits [4, 4+b) with [7, 7+b) of the absolute
    shared address, b = 1, 2, 3 for 32B, 64B, 128B; the 32-byte-atom 128B mode bits [5, 7) with [7, 9));
    the box is as wide as the swizzle span (16 bytes with none: one core-matrix row) and as tall as the
    tile's other dimension;
  * the cuda.h data type of each operand type: CUTLASS cute/arch/copy_sm90_desc.hpp to_CUtensorMapDataType;
  * pycute (CUTLASS's Python CuTe) evaluates the emitted CuTe layouts, nvcc compiles the C++ (with
    static_asserts that C++ CuTe maps sample elements where the oracle says), and Triton's own layout
    engine (GluonOpBuilder.to_linear_layout) lays out the emitted NVMMASharedLayout, where a Triton is found.
"""
from __future__ import annotations

import ast
import contextlib
import copy
import importlib.util
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys

import pytest

from solver.synth import recipe_emit

# (arch, dtype, major, mn, k_tile, swizzle, smem address, extra arguments)
RECIPES = {
    "sm90-bf16-K-128B": ("sm90", "bf16", "K", 128, 64, "128B", 0x400, []),
    "sm90-bf16-MN-128B": ("sm90", "bf16", "MN", 128, 64, "128B", 0x400, []),
    "sm100-bf16-K-128B-instr": ("sm100", "bf16", "K", 128, 64, "128B", 0x400, ["--instr", "128,256"]),
    "sm100-e4m3-MN-32B": ("sm100", "e4m3", "MN", 128, 64, "32B", 0x100, []),
    "sm90-tf32-K-64B": ("sm90", "tf32", "K", 64, 32, "64B", 0x0, []),
    "sm100-e2m1-K-128B": ("sm100", "e2m1", "K", 128, 256, "128B", 0x0, ["--kind", "mxf4"]),
    "sm103-u8-K-32B": ("sm103", "u8", "K", 64, 64, "32B", 0x100, []),
    "sm90-bf16-K-none": ("sm90", "bf16", "K", 64, 32, "none", 0x80, []),
    "sm100-bf16-MN-none-one-box": ("sm100", "bf16", "MN", 8, 16, "none", 0x100, []),
    "sm100-tf32-MN-128B_atom32B": ("sm100", "tf32", "MN", 64, 16, "128B_atom32B", 0x0, []),
    "sm90-bf16-K-128B-unaligned": ("sm90", "bf16", "K", 128, 64, "128B", 0x480, ["--allow-unaligned"]),
}
# Those Triton's NVMMASharedLayout cannot hold, and the word its reason names
TRITON_REFUSES = {"sm90-bf16-K-none": "row-major", "sm100-tf32-MN-128B_atom32B": "128B_atom32B",
                  "sm90-bf16-K-128B-unaligned": "aligns"}

BITS = {"bf16": 16, "f16": 16, "tf32": 32, "e4m3": 8, "u8": 8, "e2m1": 4}
# CUTLASS to_CUtensorMapDataType: bfloat16_t, tfloat32_t, float_e4m3_t / uint8_t, float_e2m1_t
CUDA_DATA_TYPES = {"bf16": "BFLOAT16", "tf32": "TFLOAT32", "e4m3": "UINT8", "u8": "UINT8", "e2m1": "16U4_ALIGN8B"}
SPAN_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_atom32B": 128}
TMA_MODES = {"none": "NONE", "32B": "32B", "64B": "64B", "128B": "128B", "128B_atom32B": "128B_ATOM_32B"}
# PTX ISA 5.5.7: (bits XORed, lowest target bit); the source bits start at 7
TMA_XOR = {"NONE": (0, 4), "32B": (1, 4), "64B": (2, 4), "128B": (3, 4), "128B_ATOM_32B": (2, 5)}


def recipe_document(name: str) -> dict:
    from solver.cli.main import main
    arch, dtype, major, mn, k, swizzle, address, extra = RECIPES[name]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["recipe", "--arch", arch, "--dtype", dtype, "--major", major, "--mn", str(mn), "--k-tile", str(k),
              "--swizzle", swizzle, "--smem-address", hex(address), *extra, "--json"])
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def documents() -> dict:
    return {name: recipe_document(name) for name in RECIPES}


# --- the oracle ----------------------------------------------------------------------------------------

def box_extents(name: str) -> tuple:
    """(inner, outer) elements of one TMA box: the swizzle span along d0, the tile's other extent along d1."""
    arch, dtype, major, mn, k, swizzle, address, _ = RECIPES[name]
    return SPAN_BYTES[swizzle] * 8 // BITS[dtype], (mn if major == "K" else k)


def tma_address(name: str, mn: int, k: int) -> int:
    """The shared byte address where the recipe's TMA boxes put element (mn, k)."""
    arch, dtype, major, _, _, swizzle, address, _ = RECIPES[name]
    inner, outer = box_extents(name)
    d0, d1 = (k, mn) if major == "K" else (mn, k)
    box_bytes = inner * outer * BITS[dtype] // 8
    dense = address + (d0 // inner) * box_bytes + (d1 * inner + d0 % inner) * BITS[dtype] // 8
    bits, low = TMA_XOR[TMA_MODES[swizzle]]
    return dense ^ (((dense >> 7) & ((1 << bits) - 1)) << low)


def elements(name: str):
    _, _, _, mn, k, _, _, _ = RECIPES[name]
    return ((m, j) for m in range(mn) for j in range(k))


# --- every form ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(RECIPES))
def test_each_form_is_produced(documents, name):
    for form in recipe_emit.FORMS:
        if form == "triton" and name in TRITON_REFUSES:
            continue
        text = recipe_emit.emit(documents[name], form)
        for instruction in documents[name]["instructions"]:
            assert f"{int(instruction['descriptor'], 16):016x}" in text.lower()
        for piece in (documents[name].get("mma") or {}).get("slices", []):
            assert all(f"{int(word, 16):016x}" in text.lower() for word in piece["descriptors"])


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_the_cuda_call_has_the_box_type_and_swizzle_of_the_manuals(documents, name):
    arch, dtype, major, mn, k, swizzle, address, _ = RECIPES[name]
    text = recipe_emit.emit(documents[name], "cuda")
    inner, outer = box_extents(name)
    assert f"const cuuint32_t boxDim[2] = {{{inner}u, {outer}u}};" in text
    assert "const cuuint32_t elementStrides[2] = {1u, 1u};" in text
    call = text[text.index("cuTensorMapEncodeTiled(tensor_map,"):]
    arguments = [a.strip() for a in call[call.index("(") + 1:call.index(")")].split(",")]
    assert arguments == ["tensor_map", f"CU_TENSOR_MAP_DATA_TYPE_{CUDA_DATA_TYPES[dtype]}", "2u /* tensorRank */",
                         "global_address", "globalDim", "globalStrides", "boxDim", "elementStrides",
                         "CU_TENSOR_MAP_INTERLEAVE_NONE", f"CU_TENSOR_MAP_SWIZZLE_{TMA_MODES[swizzle]}",
                         "CU_TENSOR_MAP_L2_PROMOTION_L2_128B", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"]
    contiguous, other = ("k", "mn") if major == "K" else ("mn", "k")
    assert f"globalDim[2] = {{global_dim_{contiguous}, global_dim_{other}}};" in text
    assert f"d0 = {contiguous.upper()}, the contiguous dimension" in text
    assert f"__align__({documents[name]['alignment']})" in text and f"{address:#x}" in text


def test_the_mma_instruction_and_descriptor_words_are_in_every_form(documents):
    document = documents["sm90-bf16-K-128B"]
    for form in recipe_emit.FORMS:
        text = recipe_emit.emit(document, form)
        assert "wgmma.mma_async.sync.aligned.m64n128k16" in text
    cuda = recipe_emit.emit(document, "cuda")
    # one A slice per 64-row warpgroup: the second starts 64 rows (8 x 1024 bytes) later, PTX 9.7.15.5.1.2.2
    assert re.search(r"desc_\w+_A_rows_64_127\[4\] = \{0x4000004000010240ull", cuda)
    sm100 = documents["sm100-bf16-K-128B-instr"]
    text = recipe_emit.emit(sm100, "cuda")
    assert "tcgen05.mma" in text
    assert re.search(rf"static __constant__ uint32_t idesc_\w+ = {sm100['instr_desc']['word']}u;", text)


# --- cute: the emitted layouts are the TMA's, by pycute ---------------------------------------------------

def cute_literal(text: str):
    """CuTe shape/stride types as Python tuples: Shape<Int<8>, Int<16>> -> (8, 16,)."""
    text = re.sub(r"Int<(\d+)>", r"\1", text)
    return ast.literal_eval("(" + re.sub(r"(Shape|Stride)<", "(", text).replace(">", ",)") + ")")


def emitted_cute(text: str) -> dict:
    """The layouts and addresses of a cute snippet, as pycute objects and ints."""
    import pycute
    flagged = re.search(r"using SmemLayout = ComposedLayout<Swizzle<(\d+),(\d+),(\d+)>, smem_ptr_flag_bits<(\d+)>, "
                        r"Layout<(.*)>>;", text)
    plain = re.search(r"using SmemLayoutElements = decltype\(composition\(Swizzle<(\d+),(\d+),(\d+)>\{\}, "
                      r"(?:Int<(\d+)>\{\}, )?Layout<(.*)>\{\}\)\);", text)
    b, m, s, bits, layout = flagged.groups()
    shape, stride = cute_literal(layout)
    pb, pm, ps, offset, plain_layout = plain.groups()
    plain_shape, plain_stride = cute_literal(plain_layout)
    return {"bytes": (pycute.Swizzle(int(b), int(m), int(s)), pycute.Layout(shape, stride)), "bits": int(bits),
            "elements": pycute.ComposedLayout(pycute.Swizzle(int(pb), int(pm), int(ps)), int(offset or 0),
                                              pycute.Layout(plain_shape, plain_stride)),
            "tile_address": int(re.search(r"tile_address = (0x[0-9a-f]+)", text).group(1), 16),
            "layout_address": int(re.search(r"layout_address = (0x[0-9a-f]+)", text).group(1), 16)}


def notation_layout(notation: str):
    """The recipe's own notation, `Sw<B,M,S> o shape:stride`, as pycute objects."""
    import pycute
    b, m, s, shape, stride = re.fullmatch(r"Sw<(\d+),(\d+),(\d+)> o (.*):(.*)", notation).groups()
    return pycute.Swizzle(int(b), int(m), int(s)), pycute.Layout(ast.literal_eval(shape), ast.literal_eval(stride))


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_the_cute_layouts_map_every_element_where_the_tma_writes_it(documents, name):
    pytest.importorskip("pycute")
    dtype, address = RECIPES[name][1], RECIPES[name][6]
    cute = emitted_cute(recipe_emit.emit(documents[name], "cute"))
    bits = BITS[dtype]
    assert cute["bits"] == bits and cute["tile_address"] == address
    swizzle, layout = cute["bytes"]
    recipe_swizzle, recipe_layout = notation_layout(documents[name]["layout"])
    for mn, k in elements(name):
        expected = tma_address(name, mn, k)
        # SmemLayout: the swizzle on the byte address of tile + L(mn, k) elements (smem_ptr_flag_bits)
        assert swizzle(address + layout(mn, k) * bits // 8) == expected, (mn, k)
        # SmemLayoutElements: element offsets from layout_address, the swizzle recast to elements
        assert cute["layout_address"] + cute["elements"](mn, k) * bits // 8 == expected, (mn, k)
        # and the recipe's own notation says the same
        assert recipe_swizzle(address + recipe_layout(mn, k) * bits // 8) == expected, (mn, k)


def test_an_unaligned_tile_counts_from_the_repeat_below_it(documents):
    """Swizzle<3,3,3> on bf16 elements is periodic in 512 elements (1024 bytes): a tile at 0x480 is
    0x80 bytes (64 elements) past the repeat at 0x400."""
    cute = recipe_emit.emit(documents["sm90-bf16-K-128B-unaligned"], "cute")
    assert "layout_address = 0x400;" in cute and "composition(Swizzle<3,3,3>{}, Int<64>{}, Layout<" in cute


# --- both C++ forms compile, and C++ CuTe agrees with the oracle ---------------------------------------------

def cutlass_include():
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        return None
    include = os.path.join(list(spec.submodule_search_locations)[0], "source", "include")
    return include if os.path.exists(os.path.join(include, "cute", "tensor.hpp")) else None


def sample_asserts(document: dict, name: str, count: int = 12) -> list:
    """static_asserts that C++ CuTe's SmemLayoutElements puts sample elements at the oracle's bytes."""
    _, dtype, _, mn, k, _, _, _ = RECIPES[name]
    namespace = f"layoutproof_{recipe_emit.tile_name(document)}"
    base = int(re.search(r"layout_address = (0x[0-9a-f]+)", recipe_emit.emit(document, "cute")).group(1), 16)
    picks = random.Random(name).sample(list(elements(name)), count) + [(0, 0), (mn - 1, k - 1)]
    return [f"static_assert({namespace}::SmemLayoutElements{{}}({m}, {j}) * {BITS[dtype]} / 8 == "
            f"{tma_address(name, m, j) - base});" for m, j in picks]


def test_the_cuda_and_cute_snippets_compile_as_one_translation_unit(documents, tmp_path):
    """nvcc -c, host only (no link: cuTensorMapEncodeTiled is declared by cuda.h, defined by libcuda)."""
    nvcc = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if os.path.exists("/usr/local/bin/nvcc") else None)
    include = cutlass_include()
    if nvcc is None or include is None:
        pytest.skip("needs nvcc and CUTLASS's headers (the nvidia-cutlass wheel)")
    parts = []
    for name, document in documents.items():
        parts += [recipe_emit.emit(document, "cuda"), recipe_emit.emit(document, "cute"),
                  *sample_asserts(document, name)]
    source = tmp_path / "recipes.cu"
    source.write_text("\n".join(parts) + "\nint main() { return 0; }\n")
    built = subprocess.run([nvcc, "-std=c++17", "-x", "cu", "-c", str(source), "-o", str(tmp_path / "recipes.o"),
                            "-I", include, "-diag-suppress", "177"], capture_output=True, text=True, timeout=240)
    assert built.returncode == 0, built.stderr[-4000:]


# --- triton: Triton's own layout engine against the oracle ------------------------------------------------

TRITON_SCRIPT = r"""
import json, sys
try:
    import torch
    from triton._C.libtriton import ir, gluon_ir
except ImportError as error:
    print(error, file=sys.stderr)
    sys.exit(3)
context = ir.context()
ir.load_dialects(context)
builder = gluon_ir.GluonOpBuilder(context)
out = []
for item in json.load(sys.stdin):
    scope = {}
    exec(item["snippet"], scope)
    block = scope["block_shape"]
    bases = lambda layout, shape: builder.to_linear_layout(layout._to_ir(builder), shape).offset_bases
    result = {"block_shape": block, "smem": bases(scope["smem_layout"], block)}
    if "operand_layout" in scope:
        result["operand"] = bases(scope["operand_layout"], block[::-1])
    tensor = torch.zeros([2 * block[0], 2 * block[1]], dtype=eval(item["torch_dtype"], {"torch": torch}))
    result["descriptor_block"] = list(scope["make_tensor_descriptor"](tensor).block_shape)
    out.append(result)
json.dump(out, sys.stdout)
"""


def triton_python():
    """A Python with Triton (and torch): $LAYOUTPROOF_TRITON_PYTHON, else this one if it has Triton."""
    chosen = os.environ.get("LAYOUTPROOF_TRITON_PYTHON")
    if chosen:
        return chosen
    return sys.executable if importlib.util.find_spec("triton") else None


def coordinates(bases: list) -> list:
    """Triton's linear layout as a list: offset -> [row, column], the XOR of the bases of its set bits."""
    mapped = []
    for offset in range(1 << len(bases)):
        row = column = 0
        for bit, (r, c) in enumerate(bases):
            if offset >> bit & 1:
                row, column = row ^ r, column ^ c
        mapped.append((row, column))
    return mapped


def test_triton_lays_the_emitted_layout_out_where_the_tma_writes(documents):
    python = triton_python()
    if python is None:
        pytest.skip("no Triton: set LAYOUTPROOF_TRITON_PYTHON to a Python that has triton and torch")
    names = [n for n in sorted(RECIPES) if n not in TRITON_REFUSES]
    items = []
    for name in names:
        snippet = recipe_emit.emit(documents[name], "triton")
        items.append({"snippet": snippet, "torch_dtype": re.search(r"a 2-D (torch\.\w+) tensor", snippet).group(1)})
    ran = subprocess.run([python, "-c", TRITON_SCRIPT], input=json.dumps(items), capture_output=True, text=True,
                         timeout=300)
    if ran.returncode == 3:
        pytest.skip(f"{python} lacks triton or torch")
    assert ran.returncode == 0, ran.stderr[-4000:]
    for name, result in zip(names, json.loads(ran.stdout)):
        _, dtype, major, mn, k, _, address, _ = RECIPES[name]
        per_byte = 2 if BITS[dtype] == 4 else 1                 # 4-bit elements travel two per uint8
        unit = max(BITS[dtype], 8) // 8                          # bytes per Triton element
        assert result["descriptor_block"] == result["block_shape"]
        for offset, (row, column) in enumerate(coordinates(result["smem"])):
            mn_k = (row, column * per_byte) if major == "K" else (column * per_byte, row)
            assert tma_address(name, *mn_k) - address == offset * unit, (name, offset)
        if major == "MN":               # the operand view [MN, K] = smem.permute((1, 0))
            for offset, (m, j) in enumerate(coordinates(result["operand"])):
                assert tma_address(name, m, j) - address == offset * unit, (name, offset)


@pytest.mark.parametrize("name", sorted(TRITON_REFUSES))
def test_triton_refuses_what_nvmma_shared_layout_cannot_hold(documents, name):
    with pytest.raises(ValueError, match=TRITON_REFUSES[name]):
        recipe_emit.emit(documents[name], "triton")
    assert recipe_emit.emit(documents[name], "cuda") and recipe_emit.emit(documents[name], "cute")


# --- refusals --------------------------------------------------------------------------------------------

def test_a_refused_recipe_raises_a_one_line_reason(documents):
    from solver.synth import recipe
    refused = recipe.as_json(recipe.build("sm90", "bf16", "K", 128, 64, "128B", 0x480))   # off the 1024-B repeat
    no_descriptor = recipe.as_json(recipe.build("sm90", "tf32", "MN", 64, 16, "64B", 0))  # wgmma: tf32 is K-major
    misread = copy.deepcopy(documents["sm90-bf16-K-128B"])
    misread["mma"]["slices"][1]["proof"] = {"status": "refuted", "element": [64, 0], "written": 1, "read": 2}
    for document, reason in ((refused, "recipe.swizzle_alignment"), (no_descriptor, "K offset 0"),
                             (misread, "rows 64..127")):
        for form in recipe_emit.FORMS:
            with pytest.raises(ValueError, match=reason) as raised:
                recipe_emit.emit(document, form)
            assert "\n" not in str(raised.value)
    with pytest.raises(ValueError, match="unknown form"):
        recipe_emit.emit(documents["sm90-bf16-K-128B"], "ptx")
