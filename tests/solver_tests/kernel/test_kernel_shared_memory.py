"""The executor's shared memory between warps (solver/kernel/concrete/memory.py): a load reads back what
another warp stored before a CTA barrier both passed (PTX ISA 9.0 9.7.13.1), and nothing else.

The oracle is enumeration: every interleaving of the warps' statements that the barriers allow (a
barrier's k-th completion needs every warp's k-th arrival). Wherever the executor answers a load, every
interleaving must read that value there; a load some interleaving reads differently (a race, an
overwrite, a byte never written) must stay unknown. Sequentially consistent interleavings are a subset
of what the hardware may do, so this can only catch answers that are too bold, which is the point.
"""
from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from solver.kernel.concrete import executor
from solver.kernel.frontend import source

SMEM = 0x400
WORDS = 2                                       # the shared words the programs touch: [smem], [smem+4]


def _ptx(programs: list, barrier: str = "bar.sync 1;") -> str:
    """One warp per program; each op: ("st", word, value), ("bar",), ("ld", word). Every load is stored to
    global memory (a site, so its value is recorded)."""
    lines = [".version 8.7", ".target sm_90a", ".address_size 64", ".visible .entry k(.param .u64 out)",
             f".reqntid {32 * len(programs)}, 1, 1", "{", ".reg .pred %p<9>;", ".reg .b32 %r<64>;",
             ".reg .b64 %rd<4>;", ".shared .align 8 .b8 smem[64];", "ld.param.u64 %rd1, [out];",
             "mov.u32 %r1, %tid.x;", "shr.u32 %r2, %r1, 5;"]
    for w in range(len(programs)):
        lines.append(f"setp.eq.u32 %p{w + 1}, %r2, {w};")
        lines.append(f"@%p{w + 1} bra W{w};")
    lines.append("bra END;")
    register = 10
    for w, program in enumerate(programs):
        lines.append(f"W{w}:")
        for op in program:
            if op[0] == "st":
                lines.append(f"st.shared.u32 [smem+{4 * op[1]}], {op[2]};")
            elif op[0] == "bar":
                lines.append(barrier)
            else:
                lines.append(f"ld.shared.u32 %r{register}, [smem+{4 * op[1]}];")
                lines.append(f"st.global.u32 [%rd1], %r{register};")
                register += 1
        lines.append("bra END;")
    lines += ["END:", "ret;", "}"]
    return "\n".join(lines) + "\n"


def _loaded(programs: list, barrier: str = "bar.sync 1;", shared_loads: str = "always") -> list:
    """Per warp, the value each of its loads read (an int, or None where the run does not know it)."""
    function = source.parse(_ptx(programs, barrier)).functions[0]
    run = executor.run(function, {"smem": SMEM}, executor.Launch(params={"out": 0x1000}),
                       lambda ins: ins.opcode.startswith("st.global"), shared_loads=shared_loads)
    found = [[] for _ in programs]
    for visit in run.visits:
        value = next((v for name, v in visit.values.items() if name != "%rd1"), None)
        found[visit.warp].append(value if isinstance(value, int) else None)
    return found


def _every_interleaving(programs: list) -> list:
    """Per warp, per load: the set of values the interleavings read (None: never written)."""
    seen = [[set() for op in p if op[0] == "ld"] for p in programs]

    def go(pcs: tuple, memory: tuple, reads: tuple):
        runnable = [w for w, p in enumerate(programs) if pcs[w] < len(p) and p[pcs[w]][0] != "bar"]
        if not runnable:
            if all(pc == len(p) for pc, p in zip(pcs, programs)):
                for w, values in enumerate(reads):
                    for k, v in enumerate(values):
                        seen[w][k].add(v)
                return
            assert all(p[pc][0] == "bar" for pc, p in zip(pcs, programs))      # (the same barrier count)
            go(tuple(pc + 1 for pc in pcs), memory, reads)
            return
        for w in runnable:
            op = programs[w][pcs[w]]
            pcs2 = pcs[:w] + (pcs[w] + 1,) + pcs[w + 1:]
            if op[0] == "st":
                go(pcs2, memory[:op[1]] + (op[2],) + memory[op[1] + 1:], reads)
            else:
                go(pcs2, memory, reads[:w] + (reads[w] + (memory[op[1]],),) + reads[w + 1:])
    go((0,) * len(programs), (None,) * WORDS, tuple(() for _ in programs))
    return seen


def test_a_value_stored_before_a_barrier_is_read_after_it_by_another_warp():
    programs = [[("st", 0, 7), ("bar",)], [("bar",), ("ld", 0)]]
    assert _loaded(programs) == [[], [7]]


def test_the_latest_store_before_the_load_wins_and_a_store_after_it_does_not_count():
    programs = [[("st", 0, 1), ("bar",), ("st", 0, 2), ("bar",), ("bar",), ("st", 0, 3)],
                [("bar",), ("bar",), ("ld", 0), ("bar",)]]
    assert _loaded(programs) == [[], [2]]


def test_a_store_in_the_same_barrier_interval_as_the_load_is_a_race():
    programs = [[("st", 0, 1), ("bar",), ("st", 0, 2)], [("bar",), ("ld", 0)]]
    assert _loaded(programs) == [[], [None]]


def test_a_byte_no_warp_wrote_is_unknown():
    assert _loaded([[("st", 0, 5), ("bar",)], [("bar",), ("ld", 1)]]) == [[], [None]]


def test_a_barrier_with_a_thread_count_orders_only_when_its_warps_make_up_the_count():
    """bar.sync 1, b: b threads take part (PTX ISA 9.0 9.7.13.1). Two whole warps arriving with b = 64 are
    all of them, so each completion has both; with b = 96 a third warp's threads would be needed, and which
    arrivals complete together is not known."""
    programs = [[("st", 0, 7), ("bar",)], [("bar",), ("ld", 0)]]
    assert _loaded(programs, barrier="bar.sync 1, 64;") == [[], [7]]
    assert _loaded(programs, barrier="bar.sync 1, 96;") == [[], [None]]
    assert _loaded(programs, barrier="bar.arrive 1, 64;") == [[], [None]]


def test_never_answers_nothing():
    assert _loaded([[("st", 0, 7), ("bar",)], [("bar",), ("ld", 0)]], shared_loads="never") == [[], [None]]


def test_a_warp_dispatched_on_a_stored_state_is_followed():
    """Triton's warp specialization: the default warp stores each worker's state, a barrier, and the worker
    branches on it (here: a loop it leaves when the state says so). Without the shared memory the worker
    stops; with it (the default, "when stopped"), it runs to the end."""
    text = (".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 out)\n.reqntid 64, 1, 1\n"
            "{\n.reg .pred %p<4>;\n.reg .b32 %r<9>;\n.reg .b64 %rd<3>;\n.shared .align 4 .b8 smem[8];\n"
            "ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nshr.u32 %r2, %r1, 5;\nsetp.eq.u32 %p1, %r2, 1;\n"
            "@%p1 bra WORKER;\nst.shared.u32 [smem], 1;\nbar.sync 2;\nbar.sync 2;\nst.shared.u32 [smem], 0;\n"
            "bar.sync 2;\nbra END;\nWORKER:\nbar.sync 2;\nld.shared.u32 %r3, [smem];\nsetp.eq.u32 %p2, %r3, 0;\n"
            "@%p2 bra END;\nst.global.u32 [%rd1], %r3;\nbar.sync 2;\nbra WORKER;\nEND:\nret;\n}\n")
    function = source.parse(text).functions[0]

    def run(shared_loads):
        return executor.run(function, {"smem": SMEM}, executor.Launch(params={"out": 0x1000}),
                            lambda ins: ins.opcode.startswith("st.global"), shared_loads=shared_loads)
    blind = run("never")
    assert blind.warps[1].stopped and "loaded from shared memory" in blind.warps[1].stopped
    seen = run("when stopped")
    assert [w.stopped for w in seen.warps] == [None, None]
    assert [v.values["%r3"] for v in seen.visits] == [1]     # once round with state 1, then state 0: out

    # Without a tracer the pass that reproduces its answers is the result; with one (here a tracer that
    # watches nothing, so the run is the same) a confirming run is made. Both give the same run.
    confirmed = executor.run(function, {"smem": SMEM}, executor.Launch(params={"out": 0x1000}),
                             lambda ins: ins.opcode.startswith("st.global"), tracer=executor.Tracer())
    assert [(v.statement, v.warp, v.values) for v in confirmed.visits] == \
        [(v.statement, v.warp, v.values) for v in seen.visits]
    assert [(w.steps, w.stopped) for w in confirmed.warps] == [(w.steps, w.stopped) for w in seen.warps]


_OP = st.one_of(st.tuples(st.just("st"), st.integers(0, WORDS - 1), st.integers(1, 3)),
                st.tuples(st.just("ld"), st.integers(0, WORDS - 1)))


@st.composite
def _programs(draw):
    """2 or 3 warps, each with the same number of barriers (0 to 2) and up to 2 stores or loads between."""
    warps, barriers = draw(st.integers(2, 3)), draw(st.integers(0, 2))
    programs = []
    for _ in range(warps):
        program = []
        for k in range(barriers + 1):
            program += draw(st.lists(_OP, max_size=2))
            if k < barriers:
                program.append(("bar",))
        programs.append(program)
    return programs


@settings(max_examples=60, deadline=None)
@given(_programs(), st.booleans())
def test_every_answer_is_what_every_interleaving_reads(programs, counted):
    """With no thread count, or with the count every warp's threads make up (a named barrier of them all)."""
    loaded = _loaded(programs, barrier=f"bar.sync 1, {32 * len(programs)};" if counted else "bar.sync 1;")
    oracle = _every_interleaving(programs)
    for warp, values in enumerate(loaded):
        assert len(values) == len(oracle[warp])
        for k, value in enumerate(values):
            if value is not None:
                assert oracle[warp][k] == {value}, (programs, warp, k, value, oracle[warp][k])


def test_enumeration_covers_an_answer_and_a_race():
    """The property above can fail: a known answer and a race both occur among small programs."""
    answered = raced = False
    for a, b in itertools.product([("st", 0, 1), ("ld", 0)], repeat=2):
        programs = [[a, ("bar",), ("st", 0, 2)], [("bar",), b]]
        loaded, oracle = _loaded(programs), _every_interleaving(programs)
        if b[0] == "ld":
            raced |= len(oracle[1][-1]) > 1 and loaded[1][-1] is None
        answered |= any(v is not None for v in loaded[1])
    programs = [[("st", 0, 1), ("bar",)], [("bar",), ("ld", 0)]]
    answered |= _loaded(programs)[1] == [1]
    assert answered and raced


def _corpus_kernel(name: str, problem: bool) -> tuple:
    """(function, symbols, launch) of a Triton corpus kernel: with the problem its manifest records, or with
    no parameter (`ptx descriptors`' default)."""
    import json
    import lzma
    from repo_paths import TESTS
    from solver.kernel.symbolic import evaluate
    folder = TESTS / "fixtures" / "ptx" / "corpus" / "triton"
    entry = next(e for e in json.loads((folder / "manifest.json").read_text())["kernels"] if e["file"] == name)
    module = source.parse(lzma.open(folder / name, "rt").read())
    function = module.functions[0]
    symbols = evaluate.Context(module, function, evaluate.DEFAULT_SMEM_BASE, {}).symbols
    launch = executor.Launch(params=dict(entry["params"]), grid=tuple(entry["problem"]["grid"])) if problem \
        else executor.Launch()
    return function, symbols, launch


def _count_runs(monkeypatch) -> list:
    """The SharedMemory of each run of every warp (_Runner.run) from here on: one entry per run."""
    runs = []
    real = executor._Runner.run

    def counted(self, shared):
        runs.append(shared)
        return real(self, shared)
    monkeypatch.setattr(executor._Runner, "run", counted)
    return runs


def _run_document(function, symbols, launch) -> tuple:
    """(visits, warps, the shared-memory log of each run): a run as plain values to compare."""
    from solver.kernel import analysis
    logs = []
    real = executor._Runner.run

    def logged(self, shared):
        found = real(self, shared)
        if shared is not None:
            logs.append((shared.log.writes, shared.log.spans, shared.log.uses, shared.log.final,
                         shared.log.open_ends, sorted(shared.loaded), shared.loads, shared.answered))
        return found
    executor._Runner.run = logged
    try:
        run = executor.run(function, symbols, launch, analysis._is_site)
    finally:
        executor._Runner.run = real
    return _run_document_of(run) + (logs,)


def _run_document_of(run) -> tuple:
    """(visits, warps) of a run, as plain values to compare."""
    return ([(v.statement, v.warp, v.iteration, v.values, v.lanes, v.clock) for v in run.visits],
            [(w.warp, w.steps, w.stopped, w.notes, w.clock, w.barrier_uses) for w in run.warps])


def test_passes_that_go_round_a_cycle_stop_with_what_every_pass_gives(monkeypatch):
    """Triton's tut09 TMA warp-specialized sm_100a kernel: its passes come back to an earlier pass's log and
    watched bytes (executor._comes_back), so they would never stand; stopping there gives the run that
    running every pass (memory.MAX_PASSES) gives, in fewer runs. What stands is the first run, answered
    nothing (as with shared_loads="never"), and it is not run again."""
    kernel = _corpus_kernel("tut09_tma_ws_f16_128x256x64_s3_w4_sm_100a.ptx.xz", True)
    runs = _count_runs(monkeypatch)
    stopped = _run_document(*kernel)
    assert None not in runs and len(runs) == len(stopped[2])       # (every run was the probe or a pass)
    from solver.kernel import analysis
    first = executor.run(*kernel, analysis._is_site, shared_loads="never")
    assert stopped[:2] == _run_document_of(first)
    monkeypatch.setattr(executor, "_comes_back", lambda *args: False)
    every = _run_document(*kernel)
    assert stopped[:2] == every[:2]
    assert len(every[2]) == executor.memory.MAX_PASSES > len(stopped[2])       # (the probe and the passes)


def _dispatched_after_a_tma(destination: int) -> str:
    """The dispatch above, with a TMA load (its extent not known: its map is a parameter) issued by the
    worker before each state load, to smem+destination; the state is at smem+32."""
    return (".version 8.7\n.target sm_90a\n.address_size 64\n"
            ".visible .entry k(.param .u64 out, .param .align 64 .b8 map[128])\n.reqntid 64, 1, 1\n"
            "{\n.reg .pred %p<4>;\n.reg .b32 %r<9>;\n.reg .b64 %rd<3>;\n.shared .align 128 .b8 smem[256];\n"
            "ld.param.u64 %rd1, [out];\nmov.u64 %rd2, map;\nmov.u32 %r1, %tid.x;\nshr.u32 %r2, %r1, 5;\n"
            "setp.eq.u32 %p1, %r2, 1;\n@%p1 bra WORKER;\nst.shared.u32 [smem+32], 1;\nbar.sync 2;\nbar.sync 2;\n"
            "st.shared.u32 [smem+32], 0;\nbar.sync 2;\nbra END;\nWORKER:\n"
            f"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [smem+{destination}], "
            "[%rd2, {%r2, %r2}], [smem+128];\n"
            "bar.sync 2;\nld.shared.u32 %r3, [smem+32];\nsetp.eq.u32 %p2, %r3, 0;\n"
            "@%p2 bra END;\nst.global.u32 [%rd1], %r3;\nbar.sync 2;\nbra WORKER;\nEND:\nret;\n}\n")


def test_a_load_under_a_tma_of_unknown_extent_is_never_answered_and_no_pass_is_run(monkeypatch):
    """A write of the async proxy is ordered with nothing (memory.py), and a TMA load whose map is not
    known writes from its destination to the window's end: a state byte above its destination cannot be
    answered by any pass. The first run shows that (its log holds the TMA's span) and stands alone; a TMA
    above the byte leaves it to the passes, which answer it."""
    runs = _count_runs(monkeypatch)

    def run(destination: int):
        runs.clear()
        function = source.parse(_dispatched_after_a_tma(destination)).functions[0]
        found = executor.run(function, {"smem": SMEM}, executor.Launch(params={"out": 0x1000}),
                             lambda ins: ins.opcode.startswith("st.global"))
        return found, len(runs)
    for destination in (0, 32, 35):             # (the state's bytes are 32..35: a span from any of them covers one)
        below, count = run(destination)
        assert count == 1 and below.warps[1].stopped and "loaded from shared memory" in below.warps[1].stopped, \
            destination
    for destination in (36, 64):
        above, count = run(destination)
        assert count > 1 and [w.stopped for w in above.warps] == [None, None], destination
        assert [v.values["%r3"] for v in above.visits] == [1], destination


def test_the_first_run_standing_alone_is_the_run_the_passes_give(monkeypatch):
    """On real kernels where no pass can answer a load (their state bytes lie above TMA loads of unknown
    extent), the first run is what the passes would have given, visit for visit, in one run instead of two:
    with no parameter (`ptx descriptors`' default), and with the problem the corpus records."""
    from solver.kernel.concrete import memory
    for name, problem in (("tut06_attn_fwd_f16_d64_128x64_s3_w4_sm_100a.ptx.xz", False),
                          ("tut06_attn_fwd_ws_causal_f16_d128_128x128_s3_w4_sm_100a.ptx.xz", True)):
        kernel = _corpus_kernel(name, problem)
        alone = _run_document(*kernel)
        with monkeypatch.context() as patched:
            patched.setattr(memory.SharedMemory, "unanswerable", lambda self: False)
            passes = _run_document(*kernel)
        assert len(alone[2]) == 1 and len(passes[2]) == 2, name
        assert any(w[2] for w in alone[1]), name          # (a warp stopped: the passes were wanted)
        assert alone[:2] == passes[:2], name


def test_a_warp_that_walks_the_blocks_of_the_warp_before_takes_its_independent_results(monkeypatch):
    """executor.warp_independent: a warp walking the same blocks as the warp before it takes that warp's
    results for the statements no warp's own value reaches (%tid, shared-memory loads). On corpus kernels
    (warp-specialized with passes, and not; with their problem and without) the runs, and the logs of
    every pass, are those of every warp running every statement; and taking every statement so is wrong
    (the comparison sees it)."""
    from solver.kernel.frontend import cfg
    for name, problem in (("tut09_tma_ws_f16_128x256x64_s3_w4_sm_100a.ptx.xz", True),
                          ("tut09_tma_persistent_e4m3_128x256x128_s3_w8_sub_sm_90a.ptx.xz", True),
                          ("tut06_attn_fwd_ws_causal_f16_d128_128x128_s3_w4_sm_100a.ptx.xz", False)):
        function, symbols, launch = _corpus_kernel(name, problem)
        independent = executor.warp_independent(cfg.build(function.statements))
        assert independent, name
        taken = _run_document(function, symbols, launch)
        with monkeypatch.context() as patched:
            patched.setattr(executor, "warp_independent", lambda graph: frozenset())
            every = _run_document(function, symbols, launch)
        assert taken == every, name
        if problem:
            with monkeypatch.context() as patched:
                patched.setattr(executor, "warp_independent",
                                lambda graph: frozenset(range(len(graph.statements))))
                assert _run_document(function, symbols, launch)[0] != every[0], name


def test_what_a_warp_own_values_reach_is_not_independent():
    """%tid, a shared-memory load, what they reach through any chain, and a guarded write to a register they
    reach; not a parameter, nor what the launch alone gives."""
    from solver.kernel.frontend import cfg
    text = (".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 out)\n.reqntid 64, 1, 1\n"
            "{\n.reg .pred %p<4>;\n.reg .b32 %r<12>;\n.reg .b64 %rd<3>;\n.shared .align 4 .b8 smem[8];\n"
            "ld.param.u64 %rd1, [out];\n"            # 0: the launch's
            "mov.u32 %r1, %ctaid.x;\n"               # 1: the launch's
            "add.u32 %r2, %r1, 4;\n"                 # 2: from the launch's
            "mov.u32 %r3, %tid.x;\n"                 # 3: own
            "shr.u32 %r4, %r3, 5;\n"                 # 4: own, through %r3
            "setp.eq.u32 %p1, %r2, 9;\n"             # 5: from the launch's
            "@%p1 mov.u32 %r4, 7;\n"                 # 6: a guarded write to an own register
            "mov.u32 %r5, 3;\n"                      # 7: a constant
            "ld.shared.u32 %r6, [smem];\n"           # 8: own (shared memory)
            "add.u32 %r7, %r6, %r5;\n"               # 9: own, through %r6
            "st.global.u32 [%rd1], %r7;\n"           # 10: reads an own register
            "ret;\n}\n")
    function = source.parse(text).functions[0]
    independent = executor.warp_independent(cfg.build(function.statements))
    lines = {s.line: i for i, s in enumerate(function.statements)}
    first = min(s.line for s in function.statements if s.instruction is not None and s.instruction.base == "ld")
    kinds = [lines[first + k] in independent for k in range(11)]
    assert kinds == [True, True, True, False, False, True, False, True, False, False, False]
