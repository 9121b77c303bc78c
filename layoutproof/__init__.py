"""layoutproof: a formal model and constraint checker for NVIDIA tensor-core memory layouts.

The functions users call most, as `import layoutproof as lp`:

    d = lp.decode("sm90", 0x4000004000010040)          # the fields of a shared-memory descriptor
    lp.read_addresses(d, "bf16", "K", 64)               # the byte address of every element one MMA reads
    lp.check_tensor_map({"encode": "tiled", ...}, "sm90")  # would cuTensorMapEncode* accept these arguments?
    lp.synthesize("sm90", "bf16", "K", 64, "Sw<3,4,3> o ((8,8),64):((64,512),1)", 0x400)
    lp.prove("k48.contained")                            # a property of the catalogue, with Z3
    lp.prove_layout("Sw<3,4,3> o (64,64):(64,1)", "injective", dtype="bf16")   # your own layout
    lp.rule("desc.sm90.layout")                          # a rule: source, statement, evidence

Every command of the command line is also a function, with its flags as keywords and a typed result
whose .to_json() is the command's --json (layoutproof.commands, layoutproof.results):

    from layoutproof import commands as lpc
    lpc.recipe(arch="sm90", dtype="bf16", major="K", mn=128, k_tile=64, swizzle="128B", smem_address=0x400)
    lpc.tma_place(swizzle="128B", dtype="bf16", box=(64, 8), smem_address=0x400).offsets

Hypothesis strategies for testing your own layout code are layoutproof.strategies.

Each function above is a thin wrapper of spec/ (the executable specification) or solver/ (what is built on it), which
stay importable for everything else; the command line `layoutproof` (also `python -m layoutproof`)
gives the same answers. Malformed input raises spec.rule.SpecError (a ValueError naming the field and
the rule). Modules load when a function is first called, so `import layoutproof` is cheap and only
`prove` loads Z3.
"""
from __future__ import annotations

__all__ = ["__version__", "decode", "encode", "violations", "read_addresses", "same_reads", "check_tensor_map",
           "synthesize", "recipe", "prove", "prove_layout", "rules", "rule", "example_path", "audit", "scales_map",
           "scales_check", "scales_plan"]


def example_path(name: str) -> str:
    """The path of a bundled example (they travel in the wheel, under layoutproof/examples/) by its file
    name, its stem, or the stem without its kind prefix: "tiled_bf16" is tensormap_tiled_bf16.json.
    ValueError (spec.rule.SpecError) naming the examples when none or several match."""
    import os
    from spec.rule import SpecError
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples")
    stems = sorted(f[:-len(".json")] for f in os.listdir(folder) if f.endswith(".json"))
    wanted = name[:-len(".json")] if name.endswith(".json") else name
    found = [s for s in stems if s == wanted] or [s for s in stems if s.endswith("_" + wanted)]
    if len(found) != 1:
        raise SpecError("example", name, ("matches " + ", ".join(found) if found else "no such example")
                        + "; the examples: " + ", ".join(stems))
    return os.path.join(folder, found[0] + ".json")


def __getattr__(name: str):
    """`layoutproof.__version__` (layoutproof/_version.py, which pyproject.toml reads too)."""
    if name == "__version__":
        from layoutproof._version import __version__ as version
        globals()["__version__"] = version
        return version
    raise AttributeError(f"module 'layoutproof' has no attribute {name!r}")


def decode(arch: str, word):
    """The fields of a 64-bit shared-memory matrix descriptor (wgmma on sm90, tcgen05 on sm100/sm103).

    `word` is an int or a string in 0x-hex or decimal. Returns a spec.mma.descriptor.Descriptor:
    start_address, leading_byte_offset, stride_byte_offset (bytes), base_offset, swizzle, lbo_mode
    ("relative" / "absolute"; None on sm90), `.hex`, `.fields_json()` (the `fields` of
    `layoutproof desc decode --json`)."""
    from spec.mma import descriptor
    return descriptor.decode(descriptor.check_arch(arch),
                             descriptor.parse_word(word) if isinstance(word, str) else word)


def encode(arch: str, start_address: int, leading_byte_offset: int, stride_byte_offset: int, swizzle: str,
           base_offset: int = 0, lbo_mode=None):
    """The descriptor with these fields (byte values, multiples of 16). Unrepresentable values raise
    SpecError; encodable but illegal combinations are encoded anyway (see `violations`)."""
    from spec.mma import descriptor
    return descriptor.encode(arch, start_address, leading_byte_offset, stride_byte_offset, swizzle,
                             base_offset, lbo_mode)


def violations(subject) -> list:
    """The rules a descriptor (from `decode` / `encode`) breaks, as spec.rule.Violation records."""
    from spec.mma import descriptor
    return descriptor.violations(subject)


def read_addresses(descriptor, dtype: str, major: str, mn: int, k=None, kind=None) -> list:
    """addresses[i][j]: the absolute shared-memory byte address of the first byte of operand element
    (mn = i, k = j) that one MMA reading through `descriptor` (a Descriptor) fetches. `major` is "K"
    or "MN", `mn` the M or N extent (a multiple of 8), `k` defaults to the instruction K of the dtype;
    `kind` is the tcgen05 kind (sub-byte packing)."""
    from spec.mma import readmap
    return readmap.read_addresses(readmap.make_operand(descriptor, dtype, major, mn, k, kind))


def same_reads(first, second, tile) -> bool:
    """Whether two descriptors (words, hex text or Descriptors) make the MMA read the same byte for every
    element of `tile` (a strategy's record, or a dict with arch, dtype, major, mn, k, kind): what the
    hardware means by "the same descriptor", where equal bits is stricter (an LBO the tile never uses
    may differ). layoutproof.strategies.assert_same_reads raises with the element and both addresses."""
    from solver.fuzz.compare import same_reads as compare
    return compare(first, second, tile)


def check_tensor_map(params, arch: str) -> dict:
    """Would the driver's encoder accept these tensor-map arguments on `arch`? `params` is the `tma
    check` document (a dict named as in cuda.h) or parsed spec.tma.tensormap.TensorMapParams. Returns
    {"legal": bool, "violations": [...], "warnings": [...]}."""
    from spec.tma import tensormap
    arch = tensormap.check_arch(arch)
    parsed = tensormap.parse_params(params) if isinstance(params, dict) else params
    return tensormap.check(parsed, arch)


def synthesize(arch: str, dtype: str, major: str, mn: int, layout, start_address: int, k_offset: int = 0,
               k=None, kind=None, all_solutions: bool = False):
    """The descriptor whose reads equal the tile's byte addresses for every element one instruction
    reads. `layout` is CuTe notation, (mn, k) -> element offset, optionally "Sw<B,M,S> o ..." on byte
    addresses; the instruction reads elements (mn, k_offset .. k_offset + K - 1). Returns
    solver.synth.descriptor.Outcome: status "found" (with `.descriptor`) or "none" (with `.reason`)."""
    from solver.synth import descriptor as synth
    from spec.cute import swizzle as cute_swizzle
    cute_swizzle.refuse_outside_cute(layout)          # Sw<1,0,0>: refused as C++ CuTe refuses it
    tile = synth.make_tile(arch, dtype, major, mn, layout, start_address, k, k_offset, kind)
    return synth.synthesize(tile, all_solutions=all_solutions)


def recipe(arch: str, dtype: str, major: str, mn: int, k_tile: int, swizzle: str, smem_address: int,
           kind=None, allow_unaligned: bool = False):
    """The whole set-up for an operand tile: its smem layout, the TMA boxes that fill it, one
    descriptor per instruction along K, and the exhaustive check that each reads what the boxes wrote.
    Returns solver.synth.recipe.Recipe (`solver.synth.recipe.as_json` gives `layoutproof recipe
    --json`)."""
    from solver.synth import recipe as recipes
    return recipes.build(arch, dtype, major, mn, k_tile, swizzle, smem_address, kind, allow_unaligned)


def prove(property_id: str, timeout: float = 30.0):
    """Prove or refute one property of the catalogue (`layoutproof prove --list` names them) with Z3,
    within `timeout` seconds. Writes no file. Returns solver.prove.prover.Result: status "proved",
    "refuted" (with `.counterexample`, replayed through spec/) or "unknown"."""
    from spec.rule import SpecError
    from solver.prove import prover
    from solver.prove.catalogue import all_properties
    by_id = {p.id: p for p in all_properties()}
    if property_id not in by_id:
        raise SpecError("property", property_id, "no property has this id (layoutproof prove --list)")
    return prover.prove(by_id[property_id], timeout=timeout)


def prove_layout(layout, prop: str, *, dtype=None, start_address: int = 0, other=None, range=None,
                 line: int = 128, k_slice=None, params=None, engine: str = "auto", timeout: float = 30.0,
                 descriptor=None, arch=None, major=None, k_steps=None, tma=None, coords=None):
    """Prove a property of your own layout (CuTe notation, as `synth` takes it; the swizzle acts on
    byte addresses start_address + bytes(dtype) * offset): "injective", "bijective" (onto `range`
    (lo, hi), default the layout's cosize), "equals" (`other`, a second layout) or "inside" (every
    `k_slice`-element k-slice of every row inside one `line`-byte line). `params` maps names used in
    the layout text to the values to prove it for ({"S": range(64, 4097, 64)}): one Z3 query over the
    whole range when a parameter is a stride or the offset. `layout` (and `other`) may also be GF(2)
    bases, Triton's LinearLayout: a dict {"in_dims": {...}, "offset": n} as `.bases` prints them, its
    JSON, or Triton's printout (solver.gf2.bases; injective, bijective, equals). "read-by": the
    shared-memory `descriptor` (word or hex; `arch`, `major` "K"/"MN", optional `k_steps`) reads
    exactly this (mn, k) layout at every k-step; "written-by": the TMA tiled box of `tma` (a tma check
    document or its path; optional `coords`) writes exactly this layout. Returns
    solver.prove.user_layout.LayoutResult: status "proved" / "refuted" (`.counterexample`, replayed
    by spec) / "unknown", `.engine` ("gf2", "z3", "enumeration"), `.as_json()` (prove --layout --json)."""
    from solver.prove import user_layout
    return user_layout.prove_layout(layout, prop, dtype=dtype, start_address=start_address, other=other,
                                    range_=range, line=line, k_slice=k_slice, params=params, engine=engine,
                                    timeout=timeout, descriptor=descriptor, arch=arch, major=major,
                                    k_steps=k_steps, tma=tma, coords=coords, cute_swizzles_only=True)


def audit(ptx: str, tensormaps=None, params=None, *, kernel=None, cta=(0, 0, 0), grid=None, block=None,
          cluster=None, smem_base: int = 0x400):
    """Audit a compiled kernel end to end (`layoutproof audit`): every element each MMA reads comes from the
    TMA load made for it. `ptx`: the PTX text (or a path to a .ptx file); `tensormaps`: {"PARAM" |
    "PARAM+OFFSET" | index: a tensor-map document (a dict as `tma check --tensormap` reads it)}; `params`:
    {.param name: value} for the problem; the launch: `cta`, `grid`, `block`, `cluster` as (x, y, z).
    Returns solver.kernel.audit.Report: `.ok`, `.explain()`, `.kernels[i].properties` (id, status
    "proved" / "refuted" / "unknown", witness, reason), `.document()` (the JSON of --json)."""
    import os
    from solver.kernel.audit import audit as run_audit
    from solver.kernel.concrete.executor import Launch
    if isinstance(ptx, os.PathLike) or ("\n" not in ptx and ptx.endswith(".ptx") and os.path.exists(ptx)):
        with open(ptx, encoding="utf-8", errors="replace") as handle:
            ptx = handle.read()
    pad = lambda shape, fill: None if shape is None else tuple(shape) + (fill,) * (3 - len(tuple(shape)))
    launch = Launch(params=dict(params or {}), block=pad(block, 1), cta=pad(cta, 0), grid=pad(grid, 1),
                    cluster=pad(cluster, 1))
    return run_audit(ptx, tensormaps, launch.params, launch, kernel, smem_base)


def scales_map(sf_layout: str, rows: int, k: int, block: int):
    """Where a writer layout ("interleaved", "linear-k", "linear-mn") puts the scale of each (row, K block):
    a spec.scales.layouts.ScaleMap (`.offsets[row][k_block]`, `.as_json()`), as `layoutproof scales map`."""
    from spec.scales import layouts
    return layouts.scale_map(sf_layout, rows, k, block)


def scales_check(sf_layout: str, kind: str, scale_vec=None, *, rows: int, k: int):
    """A writer layout against the reader CUTLASS and Triton emit: a spec.scales.path.ScaleCheck (`.ok`,
    `.misread`: the first element given another scale), as `layoutproof scales check`."""
    from spec.scales import path
    return path.check(sf_layout, kind, scale_vec, rows, k)


def scales_plan(kind: str, *, m: int, n: int, k: int, block=None, scale_vec=None, scale_type=None,
                sf_layout: str = "interleaved", cta_group: int = 1, smem_address: int = 0):
    """The scale loads, tcgen05.cp copies and per-k-step scale operands of one block-scaled tile: a
    solver.synth.scales_plan.Plan (`.status` "found" | "none", `.copies`, `.steps`, `.rules`, `.check`,
    `.as_json()`), as `layoutproof scales plan`."""
    from solver.synth import scales_plan as planner
    return planner.plan(planner.make_request(kind, m, n, k, sf_layout, block, scale_vec, scale_type, cta_group,
                                             smem_address))


def rules() -> list:
    """The whole rule catalogue (spec.rules.all_rules()), in definition order."""
    from spec import rules as catalogue
    return catalogue.all_rules()


def rule(rule_id: str):
    """The rule with this id, or the rule a merged id now lives in. KeyError for an unknown id."""
    from spec import rules as catalogue
    return catalogue.resolve(rule_id)


del annotations     # (the __future__ import's name: not part of the API, kept out of dir(layoutproof))
