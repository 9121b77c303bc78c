"""`layoutproof fuzz`: cases that break exactly the chosen rules, as jsonl, a CUDA host program or PTX;
the coverage report; the differential mode (--against CMD). docs/CLI.md `fuzz`."""
from __future__ import annotations

import argparse
import json
import os
import sys

from solver.cli.catalogue import summary
from solver.cli import render
from solver.cli.args import (ARCHES, EXIT_OK, EXIT_VIOLATION, add_command, arch_name, command_text, job_count,
                             number, output_path, positive_number, shown)
from solver.shell import Progress
from solver.fuzz import engine as fuzz

FORMATS = ("jsonl", "cuda", "ptx")
# The --count cap, checked before any case is made: one run stays seconds long (a case takes about 0.1-2 ms)
# and bounded in memory (--json, --against and --format cuda/ptx hold every case and their rendering); a
# larger campaign is several runs with other seeds.
MAX_COUNT = 10_000
# --answer-timeout: what an adapter may take to answer one case (ptxas on one kernel, the driver's encoder on one
# tensor map: well under a second; a whole compiler far less than this); at most a day, so that a typo
# does not read as "for ever".
ANSWER_SECONDS = 60.0
MAX_ANSWER_SECONDS = 86_400.0


class FuzzUsage(ValueError):
    """Arguments that do not go together: the CLI prints the message on one line and exits 2."""


def register(commands) -> None:
    p = add_command(
        commands, "fuzz", run, json_lines=True,
        help=summary("fuzz"),
        description="Cases for compiler tests. Each breaks exactly the --violate rules (and keeps every other "
                    "rule of the target), or none with --valid (the default). Every case is labelled by spec/: "
                    "the rules it breaks with their sources, the outcome (refused: the driver or ptxas refuses "
                    "it; trap; hang: an alloc that waits forever; wrong-data, with the element that lands or is read "
                    "elsewhere; undefined: what the manual calls undefined behaviour; unknown: no "
                    "evidence says; ok) and the exact values. The same seed gives the same cases. "
                    "`--coverage` lists every rule of each target and whether it can be broken alone.",
        epilog="examples:\n"
               "  layoutproof fuzz --target tensormap --arch sm90 --violate tma.map.box_swizzle_span --count 5 --seed 1\n"
               "  layoutproof fuzz --target desc --arch sm90 --violate desc.tile.stride_byte_offset --format ptx --out cases/\n"
               "  layoutproof fuzz --target tmem-alloc --arch sm100 --violate tmem.alloc.capacity --format ptx --out cases/\n"
               "  layoutproof fuzz --target triton-nvmma --arch sm90 --violate operand.sm90.n_extent --count 5 --seed 1\n"
               "  layoutproof fuzz --target scales --arch sm100 --violate scales.path.interleaved_writer --count 5 --seed 1\n"
               "  # against the CUDA driver's own encoder (on a machine with a GPU):\n"
               "  layoutproof fuzz --target tensormap --arch sm90 --count 200 --against 'python -m solver.fuzz.adapters.driver_encode'\n"
               "  layoutproof fuzz --coverage --target tmem-alloc --json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", choices=fuzz.TARGETS, help="desc, tensormap, recipe, tmem, tmem-alloc, triton-nvmma (Triton's NVMMASharedLayout parameters "
                   "of one MMA operand), cute-dsl or scales (a block-scaled tile's scale configuration)")
    p.add_argument("--count", type=positive_number, default=10, help="cases to generate (default 10)")
    p.add_argument("--seed", type=number, default=0, help="random seed (default 0)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--violate", metavar="RULE[,RULE...]", help="the rule ids every case breaks, and only them")
    group.add_argument("--valid", action="store_true", help="legal configurations (the default)")
    p.add_argument("--arch", default=None, type=arch_name,
                   help="sm90, sm100 or sm103 (sm_90a, sm_100a, sm_103a and any case accepted), required except "
                        "with --coverage; for tmem the GPU the targets run on (sm90: sm_90a, sm100: sm_100a/f, "
                        "sm103: sm_100f, sm_103a/f); for tmem-alloc the GPU the kernel runs on (sm100, sm103); for "
                        "triton-nvmma sm90 (wgmma) or sm100 (tcgen05.mma); for cute-dsl sm90 or sm100; for scales sm100")
    p.add_argument("--format", default="jsonl", choices=FORMATS,
                   help="jsonl (default), cuda (tensormap: a host program calling cuTensorMapEncode*), "
                        "ptx (desc: wgmma / tcgen05.mma kernels; tmem: one kernel per tcgen05.ld/st/ld.red case, "
                        "a module per target; tmem-alloc: a module per case, each warp running its operations)")
    p.add_argument("--jobs", type=job_count, default=1,
                   help="run the campaign's chunks of 1000 cases in N local processes, and with --against N "
                        "adapter processes (same output as 1)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the chunks, and with --against the adapters, on a Dask distributed cluster "
                        "(tcp://host:8786, or 'local' for a local cluster; pip install 'layoutproof[distributed]'); "
                        "same output as one process")
    p.add_argument("--out", metavar="DIR", type=output_path, help="write the cases (and the program or kernels) into DIR")
    p.add_argument("--coverage", action="store_true", help="every rule per target: breakable alone, or tied to")
    p.add_argument("--against", metavar="CMD", type=command_text,
                   help="pipe each case (a jsonl record) to CMD and report where its verdict differs from ours "
                        "(--jobs N: N processes of CMD; --scheduler: CMD runs on the cluster's workers)")
    p.add_argument("--answer-timeout", metavar="SECONDS", type=answer_seconds, default=None,
                   help=f"with --against: the seconds CMD may take to answer one case (default {ANSWER_SECONDS:g}); "
                        "a later answer stops the run (exit 2)")


def answer_seconds(text: str) -> float:
    """--answer-timeout: a positive number of seconds, at most MAX_ANSWER_SECONDS."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)}: not a number of seconds") from None
    if not 0 < value <= MAX_ANSWER_SECONDS:        # NaN fails both comparisons
        raise argparse.ArgumentTypeError(f"{shown(text)}: seconds from above 0 to {MAX_ANSWER_SECONDS:g}")
    return value


# --- Generation ------------------------------------------------------------------------------------------
def _violated(args) -> frozenset:
    """The rules asked for, once the arguments are checked (FuzzUsage before any work)."""
    if not args.target:
        raise FuzzUsage("fuzz: --target is required (desc, tensormap, recipe, tmem, tmem-alloc, triton-nvmma, cute-dsl or scales) unless --coverage")
    if args.arch is None:
        raise FuzzUsage("fuzz: --arch is required (sm90, sm100 or sm103), as by every command that makes "
                        "something for one GPU")
    arches = getattr(fuzz.target_module(args.target), "ARCHES", ARCHES)     # a target may need tcgen05
    if args.arch not in arches:
        raise FuzzUsage(f"--arch {args.arch}: --target {args.target} runs on {' or '.join(arches)} only")
    if args.answer_timeout is not None and not args.against:
        raise FuzzUsage("fuzz: --answer-timeout is the deadline of an --against adapter's answers; give --against CMD")
    count = args.count
    if count > MAX_COUNT:
        raise FuzzUsage(f"fuzz: --count {count}: at most {MAX_COUNT} cases per run; split a larger "
                        "campaign into runs with other --seed values")
    try:
        return fuzz.parse_violate(args.target, args.violate)
    except ValueError as error:
        raise FuzzUsage(str(error)) from None


def _connect(args):
    """The Dask client of --scheduler, or None (no --scheduler; an empty one is refused)."""
    if args.scheduler is None:
        return None
    from solver.fuzz import campaign
    try:
        return campaign.connect(args.scheduler)
    except ImportError as error:
        raise FuzzUsage(f"fuzz: {error}") from None
    except ValueError as error:                 # not an address we take, or no Dask scheduler answers there
        raise FuzzUsage(f"fuzz: --scheduler {args.scheduler!r:.80}: {' '.join(str(error).split())[:200]}") from None
    except OSError as error:                    # nothing answers
        raise FuzzUsage(f"fuzz: --scheduler {args.scheduler!r:.80}: cannot connect "
                        f"({' '.join(str(error).split())[:200]})") from None


def _records(args, violate, client) -> tuple:
    """(the campaign's records, made as they are consumed: its chunks on the cluster, in --jobs processes
    or here; its stats, complete once they are)."""
    from solver.fuzz import campaign
    mapper = None
    if client is not None:
        mapper = campaign.dask_mapper(client)
    elif args.jobs > 1 and args.count > campaign.CHUNK:  # one chunk needs no pool
        mapper = campaign.process_mapper(min(args.jobs, -(-args.count // campaign.CHUNK)))
    stats = fuzz.Stats()
    return campaign.run(args.target, args.arch, violate, args.count, args.seed, stats, mapper), stats


def _streams(args) -> bool:
    """Cases go out one by one as they are made: jsonl, not gathered for --json or --against."""
    return args.format == "jsonl" and not args.json and not args.against


def _shortfall(args, made: int, violate, count) -> str:
    if made == count:
        return ""
    asked = ", ".join(sorted(violate)) or "no rule (valid)"
    if made:
        return f"fuzz: only {made} distinct cases break exactly {asked} on {args.arch}"
    return (f"fuzz: no {args.target} configuration on {args.arch} breaks exactly {asked}; "
            f"`layoutproof fuzz --coverage` says what each rule is tied to")


def _rendered(args, records) -> dict:
    """file name -> text for --format cuda / ptx."""
    if args.format == "cuda":
        if args.target != "tensormap":
            raise FuzzUsage("--format cuda: the host program encodes tensor maps (--target tensormap)")
        from solver.fuzz.formats import cuda as fuzz_cuda
        return {fuzz_cuda.FILE_NAME: fuzz_cuda.render(records)}
    if args.target == "tmem":
        from solver.fuzz.formats import tmem_ptx
        return tmem_ptx.file_names(records)
    if args.target == "tmem-alloc":
        from solver.fuzz.formats import tmem_alloc_ptx
        return tmem_alloc_ptx.file_names(records)
    if args.target != "desc":
        raise FuzzUsage("--format ptx: kernels read one descriptor case each (--target desc) or issue one "
                        "tcgen05.ld/st (--target tmem) or run one allocation sequence (--target tmem-alloc)")
    from solver.fuzz.formats import ptx as fuzz_ptx
    return {f"fuzz_{args.target}_{arch}.ptx": text for arch, text in fuzz_ptx.render(records).items()}


def _out_directory(directory: str) -> None:
    """Made (and proved writable) before any case is generated: a bad --out is a usage error (exit 2)."""
    try:
        os.makedirs(directory, exist_ok=True)
        probe = os.path.join(directory, ".layoutproof-write-test")
        with open(probe, "w"):
            pass
        os.remove(probe)
    except OSError as error:
        raise FuzzUsage(f"fuzz: --out {directory!r:.80}: cannot write there ({error.strerror or error})") from None


def _write_out(directory: str, files: dict) -> list:
    """Write each file into the directory; the paths written."""
    written = []
    try:
        for name, text in files.items():
            with open(os.path.join(directory, name), "w") as handle:
                handle.write(text)
            written.append(os.path.join(directory, name))
    except OSError as error:
        raise FuzzUsage(f"fuzz: --out {directory!r:.80}: cannot write there ({error.strerror or error})") from None
    return written


def _say_written(paths: list, cases: int) -> None:
    """--out without --json: what was written, a line each (the cases file first)."""
    if paths:
        print(render.fuzz_written_text(paths, cases))


def _stream(args, records) -> int:
    """Write each jsonl line as it is made (to stdout, flushed, or to DIR/cases.jsonl); the count made.
    On a terminal, stderr shows the progress (solver.shell.Progress)."""
    made = 0
    progress = Progress(f"fuzz {args.target}", args.count, "cases")
    try:
        if args.out:
            try:
                with open(os.path.join(args.out, "cases.jsonl"), "w") as handle:
                    for record in records:
                        handle.write(json.dumps(record) + "\n")
                        made += 1
                        progress.update(made)
            except OSError as error:
                raise FuzzUsage(f"fuzz: --out {args.out!r:.80}: cannot write there "
                                f"({error.strerror or error})") from None
            return made
        for record in records:
            sys.stdout.write(json.dumps(record, indent=2 if args.pretty else None) + "\n")
            sys.stdout.flush()
            made += 1
            progress.update(made)
        return made
    finally:
        progress.close()


def _gathered(args, records) -> list:
    progress = Progress(f"fuzz {args.target}", args.count, "cases")
    out = []
    try:
        for record in records:
            out.append(record)
            progress.update(len(out))
    finally:
        progress.close()
    return out


def _jsonl(records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


# --- Differential ------------------------------------------------------------------------------------------
def against(command: str, records: list, jobs: int = 1, client=None, answer_timeout: float = ANSWER_SECONDS) -> list:
    """Ask CMD about every record (the line protocol, solver/fuzz/adapters/protocol.py): one process of it
    per thread of `jobs`, or per worker thread of the Dask `client`'s cluster, each kept for the chunks of
    cases it runs (solver/fuzz/compiler_campaign.py), each answer due within `answer_timeout` seconds. The
    records whose verdict ("accept" / "refuse"; null = not applicable) differs from ours, with the command's
    detail, in record order whatever ran them."""
    from solver.fuzz import compiler_campaign
    from solver.fuzz.adapters import protocol
    try:
        argv = compiler_campaign.shell_argv(command)
    except ValueError as error:
        raise FuzzUsage(f"fuzz: --against {command!r:.80}: {error}") from None
    differences: list = []

    def listed(_summary, row) -> None:
        if row["judgement"] is not None:
            differences.append(row["judgement"])
    try:
        compiler_campaign.run(compiler_campaign.ADAPTER, records, None, listed, jobs=jobs, client=client,
                              command=argv, answer_seconds=answer_timeout)
    except (compiler_campaign.AdapterError, protocol.ProtocolError) as error:
        raise FuzzUsage(f"fuzz: {' '.join(str(error).split())}") from None
    return differences


# --- The command -----------------------------------------------------------------------------------------
def _coverage(args) -> int:
    from solver.fuzz import coverage as fuzz_coverage
    targets = (args.target,) if args.target else fuzz.TARGETS
    document = fuzz_coverage.coverage_document(targets)
    render.emit(args, document, render.coverage_text(document))
    return EXIT_OK


def _report(args, made: int, stats, violate, count) -> None:
    short = _shortfall(args, made, violate, count)
    if short:
        print(short, file=sys.stderr)
    if stats.disagreements:       # a bug in the Z3 model or in spec: say so loudly
        print(render.fuzz_disagreements_text(len(stats.disagreements)), file=sys.stderr)


def run(args) -> int:
    if args.coverage:
        return _coverage(args)
    violate = _violated(args)
    client = _connect(args)
    try:
        return _run(args, violate, client)
    finally:
        if client is not None:
            from solver.fuzz import compiler_campaign
            compiler_campaign.disconnect(client)


def _run(args, violate, client) -> int:
    count = args.count
    records, stats = _records(args, violate, client)
    if args.out:
        _out_directory(args.out)
    if _streams(args):
        made = _stream(args, records)
        _report(args, made, stats, violate, count)
        if args.out and not args.json:
            _say_written([os.path.join(args.out, "cases.jsonl")], made)
        return EXIT_OK if made else EXIT_VIOLATION
    records = _gathered(args, records)
    _report(args, len(records), stats, violate, count)
    differences = against(args.against, records, args.jobs, client, args.answer_timeout or ANSWER_SECONDS) \
        if args.against else None
    files = _rendered(args, records) if args.format != "jsonl" else {}
    written = _write_out(args.out, {"cases.jsonl": _jsonl(records), **files}) if args.out else []
    if args.json:
        document = {"target": args.target, "arch": args.arch, "cases": records,
                    "stats": {"emitted": stats.emitted, "rejected": stats.rejected, "anchors": stats.anchors,
                              "disagreements": len(stats.disagreements)}}
        if differences is not None:
            document["differences"] = differences
        print(render.json_text(args, document))
    elif differences is not None:
        for d in differences:
            print(json.dumps(d))
        print(render.fuzz_differences_text(len(differences), len(records), args.against), file=sys.stderr)
    elif not args.out:
        sys.stdout.write("".join(files.values()))
    else:
        _say_written(written, len(records))
    if not records:
        return EXIT_VIOLATION
    return EXIT_VIOLATION if differences else EXIT_OK
