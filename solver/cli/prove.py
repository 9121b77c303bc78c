"""`layoutproof prove`: prove or refute the property catalogue with Z3 (docs/CLI.md `prove`).

Counterexamples are written only with --save DIR (DIR/<id>.json); --no-save is accepted and does
nothing (it was needed when saving was the default). Z3 is imported when the command runs."""
from __future__ import annotations

import os
import sys
import tempfile
import time

from spec.rule import SpecError

from solver.cli.catalogue import summary
from solver.cli import render
from solver.cli.args import (EXIT_OK, EXIT_VIOLATION, MAJORS, UsageError, add_command, add_smem_address, folded_choice, arch_name, dtype_name, job_count,
                             number_list, parse_json_text,
                             checked_text, layout_text, positive_number, read_json_document, read_text_document, seconds)


def check_save_folder(path) -> None:
    """--save DIR must be a folder this process can write a file into, or a path where one can be made:
    it is made, and a file written into it and removed, before any proof runs (permission bits do not
    tell: a superuser passes os.access, and /proc, read-only mounts and full disks refuse anyway)."""
    if path is None:
        return
    if path == "" or "\x00" in path:
        raise SpecError("save", path, "not a folder name")
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise SpecError("save", path, "exists and is not a folder: counterexamples are written into a folder")
        if not os.access(path, os.W_OK | os.X_OK):
            raise SpecError("save", path, "is a folder this user cannot write into")
    else:
        parent = os.path.dirname(os.path.abspath(path))
        while not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent):
            raise SpecError("save", path, f"cannot be made: {parent} is not a folder")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise SpecError("save", path, f"cannot be made: {parent} is not writable")
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as error:
            raise SpecError("save", path, f"cannot be made: {error.strerror or error}") from None
    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise SpecError("save", path, f"cannot be written into: {error.strerror or error}") from None


def _other_layout(value: str):
    """The L2 of `equals`: CuTe notation as given; bases read from a file or inline JSON with the limits
    of every document (layout_bases_argument)."""
    text = value.lstrip()
    if text.startswith("{") or (os.path.exists(value) and not os.path.isdir(value)):
        return layout_bases_argument(value)
    return checked_text(value, "layout", "layout.notation")


def layout_bases_argument(value: str):
    """--layout-bases: inline JSON, Triton's printout, or a file holding either; read with the same limits
    as every document (size, nesting, number length)."""
    text = value
    if not value.lstrip().startswith("{") and "->" not in value and os.path.exists(value):
        text = read_text_document(value, "layout_bases")
    if text.lstrip().startswith("{"):
        return parse_json_text(text, "layout_bases", "", value if text is not value else "<inline JSON>")
    return text


def select_properties(args) -> list:
    """The properties named by id or id prefix (every one with --all or no ID)."""
    from solver.prove.catalogue import all_properties
    catalogue = all_properties()
    if args.all or not args.ids:
        if args.ids:
            raise UsageError("layoutproof prove: give --all or property ids, not both")
        return catalogue
    by_id = {p.id: p for p in catalogue}
    chosen = []
    for wanted in args.ids:
        matches = [by_id[wanted]] if wanted in by_id else [p for p in catalogue if p.id.startswith(wanted + ".")]
        if not matches:
            raise SpecError("property", wanted, "no property has this id or id prefix "
                            "(layoutproof prove --list shows them)")
        chosen += [p for p in matches if p not in chosen]
    return chosen


def run_layout(args) -> int:
    """`prove --layout L PROPERTY [L2]`: a property of the user's layout (solver.prove.user_layout)."""
    from solver.prove import user_layout
    if args.layout is not None and args.layout_bases is not None:
        raise UsageError("layoutproof prove: give --layout or --layout-bases, not both")
    if args.all or args.list or args.save:
        raise UsageError("layoutproof prove: --layout takes a property, not --all, --list or --save")
    if not args.ids:
        raise UsageError("layoutproof prove: --layout needs a property: " + " ".join(user_layout.PROPERTIES))
    prop, rest = args.ids[0], args.ids[1:]
    if prop not in user_layout.PROPERTIES:
        raise SpecError("property", prop, "expected one of " + " ".join(user_layout.PROPERTIES),
                        "layout.notation")
    wants = {"equals": "one layout to compare with", "read-by": "one descriptor (64-bit, hex)"}
    if len(rest) != (1 if prop in wants else 0):
        raise UsageError(f"layoutproof prove: {prop} takes " + wants.get(prop, "no argument"))
    if args.range is not None and len(args.range) != 2:
        raise UsageError("layoutproof prove: --range takes lo,hi")
    if args.timeout <= 0:
        raise SpecError("timeout", args.timeout, "must be a positive number of seconds")
    params = dict(user_layout.parse_param(text) for text in args.param)
    for name, values in params.items():
        try:
            len(values)
        except OverflowError:      # a range too long for len(): far past the 4096 values prove_layout takes
            raise SpecError("param", name, "a range of more values than can be counted (at most 4096 value "
                            "combinations in all)", "layout.notation") from None
        except TypeError:
            pass
    tma = read_json_document(args.tma, "tma", "tma.map.params") if args.tma is not None else None
    layout = args.layout
    if layout is None:
        layout = user_layout.bases_io.load(layout_bases_argument(args.layout_bases))
    result = user_layout.prove_layout(
        layout, prop, dtype=args.dtype, start_address=args.start_address,
        other=_other_layout(rest[0]) if rest and prop == "equals" else None, range_=args.range, line=args.line,
        k_slice=args.k_slice, params=params, engine=args.engine, timeout=args.timeout,
        descriptor=rest[0] if rest and prop == "read-by" else None, arch=args.arch, major=args.major,
        k_steps=args.k_steps, tma=tma, coords=args.coords, cute_swizzles_only=True)
    render.emit(args, {"results": [result.as_json()]},
                lambda: render.layout_proof_text(result.as_json(), triton=args.triton))
    return EXIT_OK if result.status == "proved" else EXIT_VIOLATION


def run(args) -> int:
    if args.layout is not None or args.layout_bases is not None:
        return run_layout(args)   # Z3 loads only if an engine needs it
    from solver.prove import prover
    chosen = select_properties(args)
    if args.list:
        render.emit(args, {"properties": [p.as_json() for p in chosen]}, render.property_list(chosen))
        return EXIT_OK
    if args.timeout <= 0:
        raise SpecError("timeout", args.timeout, "must be a positive number of seconds")
    check_save_folder(args.save)
    progress = sys.stderr.isatty() and not args.json

    def shown(index: int, result) -> None:
        if progress:
            mark = "" if result.as_expected else f"  (expected {result.property.expected})"
            sys.stderr.write(f"\r[{index + 1}/{len(chosen)}] {result.property.id}: {result.status} "
                             f"{result.seconds:.2f}s{mark}\033[K\n")
    jobs = min(len(chosen), args.jobs if args.jobs is not None else os.cpu_count() or 1)
    began = time.perf_counter()
    results = prover.prove_many(chosen, timeout=args.timeout, save_dir=args.save, jobs=jobs, on_result=shown)
    wall = time.perf_counter() - began
    render.emit(args, {"results": [r.as_json() for r in results]}, render.prove_table(results, wall))
    return EXIT_OK if all(r.as_expected for r in results) else EXIT_VIOLATION


def register(commands) -> None:
    p = add_command(
        commands, "prove", run,
        examples=[
            'layoutproof prove k48.contained',
            'layoutproof prove --layout "Sw<3,4,3> o (64,64):(64,1)" --dtype bf16 injective',
        ],
        help=summary("prove"),
        description="Prove or refute properties over their whole parameter ranges. Each result is "
                    "proved, refuted (with a counterexample that spec/ replays) or unknown (a timeout "
                    "is never 'proved'). Exit 0 when every status equals its expected status.")
    p.add_argument("ids", nargs="*", metavar="ID", help="property ids, or id prefixes such as "
                                                        "canonical.injective")
    p.add_argument("--all", action="store_true", help="every property (the default with no ID)")
    p.add_argument("--timeout", type=seconds, default=30.0, help="seconds per property (default 30)")
    p.add_argument("--jobs", type=job_count, default=None,
                   help="processes to prove in (default: one per core); the answers do not depend on it")
    p.add_argument("--list", action="store_true", help="list the properties instead of proving")
    p.add_argument("--save", metavar="DIR", default=None,
                   help="write each counterexample to DIR/<id>.json (default: write nothing)")
    p.add_argument("--counterexamples", metavar="DIR", dest="save",
                   help="deprecated spelling of --save")
    p.add_argument("--no-save", action="store_true",
                   help="deprecated, does nothing: counterexamples are written only with --save")

    layout = p.add_argument_group(
        "your own layout", "prove --layout L [--dtype T] [--smem-address A] PROPERTY: injective, "
        "bijective [--range lo,hi], equals L2, inside [--line 128] [--k-slice N], read-by DESC --arch A "
        "--major K|MN [--k-steps N], written-by --tma PARAMS.json [--coords c0,c1,...] [--arch A]")
    layout.add_argument("--layout", default=None, type=layout_text,
                        help="a layout in CuTe notation (as synth takes it; 'Sw<B,M,S> o ...' swizzles byte "
                             "addresses); with --layout the first ID is the property")
    layout.add_argument("--layout-bases", default=None, metavar="FILE|JSON",
                        help="the layout as GF(2) bases instead (Triton's LinearLayout): JSON {\"in_dims\": "
                             "{\"dim0\": [[1], ...], ...}, \"offset\": n}, as --layout prints them, or "
                             "Triton's LinearLayout printout; equals also takes bases as L2")
    layout.add_argument("--dtype", default=None, type=dtype_name, help="element type (addresses in bytes; default: "
                                                     "element offsets)")
    add_smem_address(layout, "the base byte address (default 0)", dest="start_address", aliases=("--start-address",),
                     required=False, default=0)
    layout.add_argument("--range", type=number_list, default=None, metavar="LO,HI",
                        help="bijective: the address range [LO, HI) (default: the layout's cosize)")
    layout.add_argument("--line", type=positive_number, default=128, help="inside: line bytes (default 128)")
    layout.add_argument("--k-slice", type=positive_number, default=None,
                        help="inside: k elements per slice (default: the whole k mode)")
    layout.add_argument("--arch", default=None, type=arch_name,
                        help="read-by: the descriptor's arch; written-by: the arch tma check judges the load on "
                             "(sm90, sm100, sm103; required by both)")
    layout.add_argument("--major", default=None, type=folded_choice(MAJORS, "major"),
                        help="read-by: the operand's major-ness, K or MN (any case)")
    layout.add_argument("--k-steps", type=positive_number, default=None,
                        help="read-by: k-steps of the instruction K (default: the layout's k extent / K)")
    layout.add_argument("--tma", default=None, metavar="PARAMS.json",
                        help="written-by: a tiled `tma check` parameter document with smemAddress")
    layout.add_argument("--coords", type=number_list, default=None, metavar="C0,C1,...",
                        help="written-by: the load's tensor coordinates (checked by tma check's rules)")
    layout.add_argument("--param", action="append", default=[], metavar="NAME=LO..HI[:STEP]",
                        help="a named integer in the layout text, proved for every value (repeatable)")
    layout.add_argument("--triton", action="store_true",
                        help="also print a linear layout as Triton's LinearLayout printout and, when it is a "
                             "bijection of its element slots, as Gluon's SharedLinearLayout offset_bases")
    layout.add_argument("--engine", default="auto", choices=("auto", "gf2", "z3", "enumeration"),
                        help="auto: GF(2) when the layout is linear, else (injective) the mixed-radix "
                             "criterion, else Z3; small domains are also enumerated by spec (default auto)")
