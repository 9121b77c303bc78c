"""`layoutproof recipe --emit cuda|cute|triton`: a recipe as code to paste (issue 29).

emit(document, form) renders the recipe document (solver.synth.recipe.as_json, with the optional keys
"instr_desc" that `recipe --instr` adds and "mma" {"instruction", "slices": [{"operand", "rows",
"descriptors"}]}) as

  cuda    C++ host code: a function that calls cuTensorMapEncodeTiled (cuda.h) for the recipe's TMA box,
          the global tensor's address, extents and row stride as its parameters; the descriptor words as
          `static __constant__ uint64_t desc_<tile>[]` (a kernel reads them), one per k-step (and one array
          per MMA slice);
  cute    C++ with CuTe: the smem layout as CuTe types, the same map as the recipe's notation (the
          conventions below), and the descriptor words as constants;
  triton  Python for Triton Gluon: the NVMMASharedLayout and TMA block shape that give the recipe's tile,
          a TensorDescriptor for the global tensor, and the descriptor words in a comment.

A recipe that is refused (a rule broken, no TMA loads, a k-step with no descriptor, a read not proved,
an instruction descriptor that breaks a rule) raises ValueError with a one-line reason, as does a
recipe that Triton's NVMMASharedLayout cannot express (triton_refusal says which).

The layout conventions (the recipe's notation against CuTe's two spellings):
  * The recipe's layout L maps (mn, k) to an ELEMENT offset; its swizzle Sw<B,M,S> acts on the absolute
    shared-memory BYTE address: element (mn, k) lives at Sw(smem_address + L(mn, k) * bits / 8)
    (solver/synth/recipe.py; PTX ISA 5.5.7: the TMA swizzle follows the absolute address).
  * CUTLASS spells that same byte-address swizzle as ComposedLayout<Swizzle<B,M,S>, smem_ptr_flag_bits<bits>,
    Layout> (cute/atom/mma_traits_sm90_gmma.hpp: Layout_K_SW128_Atom<T> is upcast<bits>(Layout_K_SW128_Atom_Bits),
    Swizzle<3,4,3> kept; cute/pointer_flagged.hpp: make_tensor(smem_ptr, that layout) swizzles the pointer's
    address). It is `SmemLayout` of the cute form, exact wherever the tile sits.
  * CuTe's position-independent spelling has the swizzle on element offsets: recast_layout<uint8_t, T>
    (cute/swizzle_layout.hpp: upcast<N> lowers M by log2 N, downcast<N> raises it), so Sw<3,4,3> on bytes is
    Swizzle<3,3,3> on 16-bit elements, Swizzle<3,4,3> on 8-bit and Swizzle<3,2,3> on 32-bit ones (the
    SM80 CUTLASS kernels' composition(Swizzle<3,3,3>{}, ...) for half_t). It maps (mn, k) to an element
    offset from a base on the swizzle's repeat (2^(B+M+S) bytes): the tile's own address when it is
    aligned, as the recipe's rule recipe.swizzle_alignment asks; else the repeat below it, with the
    distance as the composition's offset. It is `SmemLayoutElements` of the cute form.
"""
from __future__ import annotations

import re

from spec.cute.layout import ComposedLayout, Layout
from spec.cute.notation import parse_layout
from spec.cute.swizzle import Swizzle
from spec.mma import dtypes

from solver.fuzz.adapters import driver_encode
from solver.fuzz.formats.cuda import argument_expression, array_declaration, comment_text, encoder_call_text

FORMS = ("cuda", "cute", "triton")

# The packed 4-bit type, which CUTLASS loads as CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B (cute/arch/copy_sm90_desc.hpp
# to_CUtensorMapDataType: float_e2m1_t, 16 4-bit elements in 8 bytes, dense in shared memory as the recipe's
# kind::mxf4 tile is). The other types: solver.synth.box.MMA_DATA_TYPES.
PACKED_TMA_DATA_TYPES = {"e2m1": "16U4_ALIGN8B"}

# What CUTLASS passes for the rest (cute/atom/copy_traits_sm90_tma.hpp, make_tma_copy_desc): no interleave,
# L2 promotion of 128 bytes, out-of-bound elements filled with zeros.
TMA_INTERLEAVE, TMA_L2_PROMOTION, TMA_OOB_FILL = "NONE", "L2_128B", "NONE"

# The CUTLASS element type of each recipe dtype (cutlass/numeric_types.h), for the cute form.
CUTLASS_TYPES = {"f16": "cutlass::half_t", "bf16": "cutlass::bfloat16_t", "tf32": "cutlass::tfloat32_t",
                 "f32": "float", "e4m3": "cutlass::float_e4m3_t", "e5m2": "cutlass::float_e5m2_t",
                 "s8": "int8_t", "u8": "uint8_t", "e2m1": "cutlass::float_e2m1_t"}

# The torch dtype a Triton TensorDescriptor's tensor has (the 4-bit type travels packed, two per uint8).
TORCH_TYPES = {"f16": "torch.float16", "bf16": "torch.bfloat16", "tf32": "torch.float32", "f32": "torch.float32",
               "e4m3": "torch.float8_e4m3fn", "e5m2": "torch.float8_e5m2", "s8": "torch.int8",
               "u8": "torch.uint8", "e2m1": "torch.uint8"}

# Triton Gluon's NVMMASharedLayout (python/triton/experimental/gluon/language/_layouts.py): swizzle_byte_width
# in [0, 32, 64, 128], element_bitwidth in [8, 16, 32, 64]. It has no 32-byte-atom 128B mode.
TRITON_SWIZZLE_BYTES = {"none": 0, "32B": 32, "64B": 64, "128B": 128}

DESCRIPTOR_NAMES = {"sm90": "wgmma matrix descriptors (PTX ISA 9.7.15.5.1.2.2)",
                    "sm100": "tcgen05 shared memory descriptors (PTX ISA 9.7.16.4.1)",
                    "sm103": "tcgen05 shared memory descriptors (PTX ISA 9.7.16.4.1)"}


# --- what is emitted: the parts every form shares ------------------------------------------------------

def emit(document: dict, form: str) -> str:
    """The recipe `document` (recipe.as_json) as code of `form` (one of FORMS); ValueError when the recipe
    is refused or `form` cannot express it."""
    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}; expected one of {', '.join(FORMS)}")
    reason = refusal(document)
    if reason:
        raise ValueError(reason)
    return {"cuda": cuda_snippet, "cute": cute_snippet, "triton": triton_snippet}[form](document)


def refusal(document: dict):
    """Why the recipe gives no code (one line), or None."""
    violations = document.get("violations") or []
    if violations:
        first = violations[0]
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        return f"the recipe is refused: {first.get('rule')}: {first.get('message')}{more}"
    if not document.get("tma") or not document["tma"].get("loads"):
        return "the recipe has no TMA loads"
    for instruction in document.get("instructions") or []:
        if instruction.get("status") != "found" or not instruction.get("descriptor"):
            why = (instruction.get("reason") or "no descriptor").split(" | ")[0]
            return f"no descriptor for the k-step at K offset {instruction.get('k_offset')}: {why}"
    proof = document.get("proof") or {}
    if proof.get("status") != "proved":
        return f"what the TMA writes is not proved to be what the descriptors read: {_one_line(proof)}"
    for piece in (document.get("mma") or {}).get("slices") or []:
        if (piece.get("proof") or {}).get("status", "proved") != "proved":
            return (f"the MMA's read of operand {piece['operand']} rows {piece['rows'][0]}..{piece['rows'][1]} is "
                    f"not proved: {_one_line(piece['proof'])}")
    broken = (document.get("instr_desc") or {}).get("violations") or []
    if broken:
        return f"the instruction descriptor breaks {broken[0].get('rule')}: {broken[0].get('message')}"
    return None


def _one_line(value) -> str:
    return " ".join(str(value).split())


def element_bits(document: dict) -> int:
    return dtypes.dtype(document["dtype"]).bits


def tile_name(document: dict) -> str:
    """A C identifier for the tile, its address included (pipeline stages differ only there):
    sm90_bf16_K_128x64_128B_at0x400."""
    name = (f"{document['arch']}_{document['dtype']}_{document['major']}_{document['mn']}x{document['k_tile']}_"
            f"{document['swizzle']}_at{document['smem_address']:#x}")
    return re.sub(r"\W", "_", name)


def headline(document: dict) -> str:
    return (f"layoutproof recipe: {document['arch']} {document['dtype']} (kind::{document['kind']}), "
            f"{document['major']}-major operand tile of MN={document['mn']} x K={document['k_tile']} elements, "
            f"swizzle {document['swizzle']}")


def placement_lines(document: dict) -> list:
    """Where the tile must sit: the descriptors hold its absolute shared-memory address."""
    address, alignment = document["smem_address"], document["alignment"]
    where = (f"aligned to {alignment} bytes (the swizzle's repeat, PTX ISA 5.5.7; rule recipe.swizzle_alignment)."
             if address % alignment == 0 else
             f"{address % alignment:#x} bytes past a {alignment}-byte swizzle repeat (built with --allow-unaligned).")
    return [f"Shared memory: {document['size_bytes']} bytes at shared-window byte address {address:#x}, {where}",
            "The descriptor words encode that address: place the tile there (e.g. in "
            f"`extern __shared__ __align__({alignment}) uint8_t smem[];`)",
            f"and check __cvta_generic_to_shared(tile) == {address:#x}.",
            f"Layout, (mn, k) -> element offset, swizzle on byte addresses: {document['layout']}"]


def descriptor_tables(document: dict) -> list:
    """(name suffix, what the words are, the words): the k-steps', then one per MMA slice."""
    instructions = document["instructions"]
    offsets = ", ".join(str(i["k_offset"]) for i in instructions)
    tables = [("", f"one per k-step, at K = {offsets}", [int(i["descriptor"], 16) for i in instructions])]
    for piece in (document.get("mma") or {}).get("slices") or []:
        first, last = piece["rows"]
        tables.append((f"_{piece['operand']}_rows_{first}_{last}",
                       f"operand {piece['operand']}, rows {first}..{last}, one per k-step",
                       [int(word, 16) for word in piece["descriptors"]]))
    return tables


def mma_lines(document: dict) -> list:
    """The MMA instruction and the notes on the reads that were left out, as comment text."""
    mma = document.get("mma") or {}
    lines = [f"MMA instruction ({mma.get('shape')}): {mma['instruction']}"] if mma.get("instruction") else []
    return lines + [f"MMA note: {note}" for note in mma.get("notes") or []]


def parsed_layout(document: dict) -> ComposedLayout:
    """The recipe's layout as spec.cute objects (a plain layout gets the identity swizzle)."""
    layout = parse_layout(document["layout"])
    return layout if isinstance(layout, ComposedLayout) else ComposedLayout(Swizzle(0, 4, 3), 0, layout)


# --- cuda ----------------------------------------------------------------------------------------------

def tma_dimensions(document: dict) -> tuple:
    """(d0, d1) of the global tensor: d0 is the contiguous dimension, the one the swizzle runs along."""
    return ("k", "mn") if document["major"] == "K" else ("mn", "k")


def tma_data_type(dtype: str) -> str:
    """The cuda.h data type (less its prefix) that loads `dtype`; solver.synth.box is imported here, as it
    brings in z3 (solver.model.tensormap)."""
    from solver.synth.box import MMA_DATA_TYPES
    return PACKED_TMA_DATA_TYPES.get(dtype) or MMA_DATA_TYPES[dtype]


def encoder_call(document: dict) -> driver_encode.EncoderCall:
    """The cuTensorMapEncodeTiled call as driver_encode builds it (cuda.h's parameter order and types,
    enumerators checked against its names). globalAddress, globalDim and globalStrides are the user's:
    the values given here stand in for them and are not rendered."""
    tma = document["tma"]
    return driver_encode.arguments({
        "encode": "tiled", "dataType": tma_data_type(document["dtype"]), "rank": 2, "globalAddress": 0,
        "globalDim": list(tma["box"]), "globalStrides": [16], "boxDim": list(tma["box"]),
        "elementStrides": [1, 1], "interleave": TMA_INTERLEAVE, "swizzle": tma["swizzle"],
        "l2Promotion": TMA_L2_PROMOTION, "oobFill": TMA_OOB_FILL})


def load_lines(document: dict) -> list:
    """One comment line per box load: its box origin (as an offset from the tile's origin) and destination."""
    d0, d1 = tma_dimensions(document)
    return [f"  load {i}: box at (d0 = {d0}0 + {load['box_origin'].get(d0.upper(), 0)}, d1 = {d1}0) -> shared "
            f"{load['smem_address']:#x}" for i, load in enumerate(document["tma"]["loads"])]


def user_argument(argument: driver_encode.Argument) -> str:
    """The snippet's expression for an argument: the global address is the function's parameter."""
    return "global_address" if argument.name == "globalAddress" else argument_expression(argument)


def c_comment(text: str) -> str:
    return "// " + comment_text(text)


def c_descriptor_array(name: str, what: str, words: list) -> str:
    entries = ", ".join(f"0x{word:016x}ull" for word in words)
    # __constant__: a kernel reads the words directly (a host `static const` array is not visible in device
    # code); the host reads them back with cudaMemcpyFromSymbol if it needs them
    return f"static __constant__ uint64_t {name}[{len(words)}] = {{{entries}}};  // {comment_text(what)}"


def cuda_snippet(document: dict) -> str:
    name = tile_name(document)
    d0, d1 = tma_dimensions(document)
    call = encoder_call(document)
    tma = document["tma"]
    lines = [c_comment(line) for line in [headline(document)] + placement_lines(document)]
    lines += ["#include <cuda.h>", "#include <cstdint>", "",
              "// The TMA tensor map (cuda.h cuTensorMapEncodeTiled) of the global tensor the tile comes from:",
              f"//   d0 = {d0.upper()}, the contiguous dimension; d1 = {d1.upper()}.",
              f"//   global_address: the tensor's first element (16-byte aligned); global_dim_{d0}, global_dim_{d1}: "
              "its extents in elements;",
              f"//   global_stride_{d1}_bytes: bytes from one {d1.upper()} row to the next (a multiple of 16).",
              *([f"//   16U4_ALIGN8B: the extents count 4-bit elements, two to a byte; global_dim_{d0} is even."]
                if tma_data_type(document["dtype"]) == "16U4_ALIGN8B" else []),
              f"// One box of {tma['box'][0]} x {tma['box'][1]} elements ({tma['box_bytes']} bytes) per load; "
              f"the tile takes {len(tma['loads'])}, from the tile's origin ({d0}0, {d1}0):",
              *(f"//{line}" for line in load_lines(document)),
              f"static CUresult make_tensor_map_{name}(CUtensorMap *tensor_map, void *global_address,",
              f"    cuuint64_t global_dim_{d0}, cuuint64_t global_dim_{d1}, cuuint64_t global_stride_{d1}_bytes) {{",
              f"  const cuuint64_t globalDim[2] = {{global_dim_{d0}, global_dim_{d1}}};",
              f"  const cuuint64_t globalStrides[1] = {{global_stride_{d1}_bytes}};",
              *(array_declaration(a, 2) for a in call.arguments if a.name in ("boxDim", "elementStrides")),
              f"  return {encoder_call_text(call, 'tensor_map', user_argument)};", "}", ""]
    lines += c_descriptor_lines(document, f"desc_{name}")
    return "\n".join(lines) + "\n"


def c_descriptor_lines(document: dict, prefix: str) -> list:
    """The descriptor arrays, the instruction descriptor and the MMA instruction, as C++ (both C++ forms)."""
    lines = [c_comment(f"{DESCRIPTOR_NAMES[document['arch']]}, proved to read what the TMA boxes wrote:")]
    lines += [c_descriptor_array(prefix + suffix, what, words) for suffix, what, words in descriptor_tables(document)]
    lines += [c_comment(line) for line in mma_lines(document)]
    idesc = document.get("instr_desc")
    if idesc:
        lines += [c_comment(f"tcgen05.mma instruction descriptor (PTX ISA 9.7.16.4.2): M={idesc['m']} N={idesc['n']}, "
                            f"cta_group::{idesc['cta_group']}, A {idesc['a_major']}-major, B {idesc['b_major']}-major, "
                            f"D {idesc['d_type']}"),
                  f"static __constant__ uint32_t i{prefix} = {int(idesc['word'], 16):#010x}u;"]
    return lines


# --- cute ----------------------------------------------------------------------------------------------

def element_swizzle(byte_swizzle: Swizzle, bits: int) -> Swizzle:
    """CuTe's recast_layout<uint8_t, T> of a byte-address swizzle to elements of `bits` bits
    (cute/swizzle_layout.hpp: upcast<N> for N bytes per element lowers M by log2 N; downcast<N> for N
    elements per byte raises it)."""
    if bits >= 8:
        shift = (bits // 8).bit_length() - 1
        if byte_swizzle.base < shift:
            raise ValueError(f"{byte_swizzle.notation()} keeps fewer bytes than one {bits}-bit element intact")
        return Swizzle(byte_swizzle.bits, byte_swizzle.base - shift, byte_swizzle.shift)
    return Swizzle(byte_swizzle.bits, byte_swizzle.base + (8 // bits).bit_length() - 1, byte_swizzle.shift)


def layout_base_address(document: dict) -> int:
    """The byte address SmemLayoutElements counts from: the tile's own when it lies on the swizzle's repeat
    (2^(B+M+S) bytes), else the repeat boundary below it. No swizzle: the tile's."""
    swizzle = parsed_layout(document).swizzle
    if swizzle.is_identity():
        return document["smem_address"]
    return document["smem_address"] - document["smem_address"] % swizzle.period


def element_offset(document: dict) -> int:
    """The composition's offset, in elements: the layout's own, plus the tile's distance from
    layout_base_address."""
    distance_bits = (document["smem_address"] - layout_base_address(document)) * 8
    return parsed_layout(document).offset + distance_bits // element_bits(document)


def cute_int_tuple(value, kind: str) -> str:
    """A shape or stride as CuTe types: 8 -> Int<8>, (8, 16) -> Shape<Int<8>, Int<16>>."""
    if isinstance(value, int):
        return f"Int<{value}>"
    return f"{kind}<{', '.join(cute_int_tuple(v, kind) for v in value)}>"


def cute_layout(layout: Layout) -> str:
    return f"Layout<{cute_int_tuple(layout.shape, 'Shape')}, {cute_int_tuple(layout.stride, 'Stride')}>"


def cute_swizzle(swizzle: Swizzle) -> str:
    return f"Swizzle<{swizzle.bits},{swizzle.base},{swizzle.shift}>"


def cute_snippet(document: dict) -> str:
    layout = parsed_layout(document)
    if layout.offset:
        raise ValueError(f"the layout {document['layout']} has an offset, which smem_ptr_flag layouts cannot hold")
    bits = element_bits(document)
    plain = cute_layout(layout.layout)
    offset = element_offset(document)
    offset_argument = f"Int<{offset}>{{}}, " if offset else ""
    base = layout_base_address(document)
    lines = [c_comment(line) for line in [headline(document)] + placement_lines(document)]
    lines += ["#include <cute/tensor.hpp>", "#include <cstdint>", "",
              f"namespace layoutproof_{tile_name(document)} {{", "using namespace cute;", "",
              f"using Element = {CUTLASS_TYPES[document['dtype']]};",
              f"static_assert(sizeof_bits_v<Element> == {bits});",
              f"constexpr uint32_t tile_address = {document['smem_address']:#x};   // shared-window byte address",
              "",
              "// The recipe's layout as CUTLASS's GMMA atoms spell it (Layout_*_SW*_Atom<T>): make_tensor puts the",
              "// swizzle on the byte address of the smem pointer, exact wherever the tile sits.",
              f"using SmemLayout = ComposedLayout<{cute_swizzle(layout.swizzle)}, smem_ptr_flag_bits<{bits}>, "
              f"{plain}>;",
              "CUTE_HOST_DEVICE auto make_smem_tensor(Element *tile) {   // CUTE_HOST_DEVICE: __forceinline__",
              "  return make_tensor(make_smem_ptr(tile), SmemLayout{});",
              "}",
              "",
              "// The same map on element offsets (the swizzle recast to elements, cute/swizzle_layout.hpp",
              "// recast_layout<uint8_t, Element>), counting from shared address layout_address"
              + (":" if base == document["smem_address"] else
                 f", the {layout.swizzle.period}-byte repeat below the tile, {offset} elements before it:"),
              f"constexpr uint32_t layout_address = {base:#x};",
              f"using SmemLayoutElements = decltype(composition("
              f"{cute_swizzle(element_swizzle(layout.swizzle, bits))}{{}}, {offset_argument}{plain}{{}}));",
              f"static_assert(size(SmemLayoutElements{{}}) == {document['mn'] * document['k_tile']});   // MN x K",
              ""]
    lines += c_descriptor_lines(document, "desc")
    lines += [f"}}  // namespace layoutproof_{tile_name(document)}"]
    return "\n".join(lines) + "\n"


# --- triton --------------------------------------------------------------------------------------------

def triton_refusal(document: dict):
    """Why Triton Gluon's NVMMASharedLayout cannot hold the recipe's tile (one line), or None.

    Triton lays an NVMMASharedLayout block out (lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp,
    nvmmaSharedToLinearLayout; getTMABlockShape) in TMA blocks whose contiguous dimension is clamped to the
    swizzle width: 8-row swizzle atoms down the rows, then the next TMA block; that is the recipe's layout for
    the 32B, 64B and 128B swizzles (tests/solver_tests/synth/test_recipe_emit.py compares the two with Triton's own linear
    layouts). With swizzle_byte_width=0 the block is plain row-major, its contiguous dimension whole: the
    recipe's no-swizzle tile (16-byte boxes one after another) only when it is a single box."""
    swizzle = document["swizzle"]
    if swizzle not in TRITON_SWIZZLE_BYTES:
        return (f"Triton's NVMMASharedLayout has swizzle_byte_width 0, 32, 64 or 128, no {swizzle} "
                "(the 128-byte swizzle with 32-byte atoms)")
    if swizzle == "none" and len(document["tma"]["loads"]) > 1:
        return (f"with swizzle_byte_width=0 Triton lays a block out row-major, its contiguous dimension whole, "
                f"not as the recipe's {len(document['tma']['loads'])} 16-byte-wide boxes one after another")
    if document["smem_address"] % document["alignment"]:
        return (f"Triton aligns an NVMMASharedLayout buffer to its swizzle repeat ({document['alignment']} bytes); "
                f"this recipe's tile is at {document['smem_address']:#x}")
    return None


def triton_block_shape(document: dict) -> list:
    """The TMA block in the global tensor's order, [outer, contiguous], in the tensor's elements (two
    4-bit elements per uint8)."""
    mn, k, bits = document["mn"], document["k_tile"], element_bits(document)
    outer, contiguous = (mn, k) if document["major"] == "K" else (k, mn)
    return [outer, contiguous * bits // 8 if bits < 8 else contiguous]


def triton_layout_call(document: dict, transposed: bool) -> str:
    bits = max(8, element_bits(document))
    return (f"gl.NVMMASharedLayout(swizzle_byte_width={TRITON_SWIZZLE_BYTES[document['swizzle']]}, "
            f"element_bitwidth={bits}, rank=2, transposed={transposed})")


def python_comment(text: str) -> str:
    return "# " + comment_text(text)


def triton_snippet(document: dict) -> str:
    reason = triton_refusal(document)
    if reason:
        raise ValueError(reason)
    d0, d1 = (name.upper() for name in tma_dimensions(document))
    packed = ", two e2m1 to a uint8 byte along it" if element_bits(document) < 8 else ""
    header = [headline(document) + " (Triton Gluon)",
              "Triton expresses this tile: an NVMMASharedLayout block is laid out as the recipe's TMA boxes",
              "write it (Triton's nvmmaSharedToLinearLayout; TMA blocks as wide as the swizzle, getTMABlockShape).",
              f"Layout, (mn, k) -> element offset, swizzle on byte addresses: {document['layout']}"]
    lines = [python_comment(line) for line in header]
    lines += ["from triton.experimental.gluon import language as gl",
              "from triton.experimental.gluon.nvidia.hopper import TensorDescriptor   # blackwell re-exports it", "",
              python_comment(f"The smem tile and its TMA block in the global tensor's order [{d1}, {d0}], "
                             f"{d0} contiguous (the last dimension){packed}."),
              f"block_shape = {triton_block_shape(document)}",
              f"smem_layout = {triton_layout_call(document, False)}", ""]
    if document["major"] == "MN":
        lines += [python_comment("The MMA reads the MN-major operand [MN, K] as smem.permute((1, 0)), laid out as"),
                  f"operand_layout = {triton_layout_call(document, True)}", ""]
    tf32 = (["    # For tf32, TensorDescriptor(..., round_f32_to_tf32=True), where your Triton has it, makes the",
             "    # TMA round as CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 does; the MMA reads tf32 either way."]
            if document["dtype"] == "tf32" else [])
    lines += ["", "def make_tensor_descriptor(tensor):",
              f'    """The TMA descriptor of `tensor`, a 2-D {TORCH_TYPES[document["dtype"]]} tensor [{d1}, {d0}] '
              f'with {d0} contiguous."""',
              *tf32,
              "    return TensorDescriptor.from_tensor(tensor, block_shape, smem_layout)", ""]
    words = [f"{DESCRIPTOR_NAMES[document['arch']]} layoutproof proved for this tile at shared address "
             f"{document['smem_address']:#x}",
             "(Triton builds its own from smem_layout and its allocation; these are to compare with):"]
    words += [f"  {what}: " + ", ".join(f"0x{word:016x}" for word in table) for _, what, table in
              descriptor_tables(document)]
    if document.get("instr_desc"):
        words.append(f"tcgen05.mma instruction descriptor: {document['instr_desc']['word']}")
    lines += [python_comment(line) for line in words + mma_lines(document)]
    return "\n".join(lines) + "\n"
