"""The typed results of layoutproof.commands: one dataclass per command, one field per key of the JSON
document the command prints with --json (docs/CLI.md describes each key), plus the exit status.

    r.exit_status     0: valid / found / as expected; 1: breaks a rule, or no solution (docs/CLI.md)
    r.ok              exit_status == 0
    r.to_json()       the --json document, key for key (a copy)

A key the document leaves out (a "none" answer has no descriptor) is None. tests/cli_tests/test_api_commands.py
checks, for every command, that each key its JSON holds is a field here and that to_json() equals the
command line's output.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from typing import Optional

# JSON keys that are not Python identifiers or would shadow a dataclass's own names: key -> field
_RENAMED = {"self": "own_cta"}


@dataclass(frozen=True, kw_only=True)
class CommandResult:
    """What every command returns."""
    command: str = ""
    exit_status: int = 0
    document: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    def to_json(self) -> dict:
        return copy.deepcopy(self.document)

    @classmethod
    def json_keys(cls) -> set:
        """The document keys this class types ("ok", where a document has it, is the `ok` property)."""
        own = {f.name for f in fields(cls)} - {f.name for f in fields(CommandResult)}
        back = {value: key for key, value in _RENAMED.items()}
        return {back.get(name, name) for name in own} | {"ok"}

    @classmethod
    def from_document(cls, command: str, exit_status: int, document):
        values = {}
        if isinstance(document, dict):
            names = {f.name for f in fields(cls)}
            values = {_RENAMED.get(k, k): v for k, v in document.items() if _RENAMED.get(k, k) in names}
        return cls(command=command, exit_status=exit_status, document=document, **values)


@dataclass(frozen=True, kw_only=True)
class DescDecode(CommandResult):
    """desc decode: the descriptor's fields and the rules it breaks."""
    arch: Optional[str] = None
    descriptor: Optional[str] = None
    fields: Optional[dict] = None
    violations: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class DescEncode(DescDecode):
    """desc encode: the same keys as desc decode."""


@dataclass(frozen=True, kw_only=True)
class DescAddresses(DescDecode):
    """desc addresses: addresses[mn][k] of every element one MMA reads."""
    dtype: Optional[str] = None
    kind: Optional[str] = None
    major: Optional[str] = None
    mn: Optional[int] = None
    k: Optional[int] = None
    phase_model: Optional[str] = None
    addresses: Optional[list] = None
    map: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class Synth(CommandResult):
    """synth: status "found" with the descriptor, or "none" with the reason and the excluding rules."""
    status: Optional[str] = None
    descriptor: Optional[str] = None
    fields: Optional[dict] = None
    reason: Optional[str] = None
    ignored: Optional[list] = None
    excluded: Optional[dict] = None
    violations: Optional[list] = None
    solutions: Optional[list] = None
    hint: Optional[str] = None


@dataclass(frozen=True, kw_only=True)
class Check(CommandResult):
    """check: does the descriptor read the tile; the first mismatch and the fix."""
    match: Optional[bool] = None
    descriptor: Optional[str] = None
    fields: Optional[dict] = None
    mismatch: Optional[dict] = None
    violations: Optional[list] = None
    fix: Optional[dict] = None
    suggested_descriptor: Optional[str] = None
    reason: Optional[str] = None
    hint: Optional[str] = None


@dataclass(frozen=True, kw_only=True)
class Recipe(CommandResult):
    """recipe: layout, TMA loads, descriptors per k-step, the proof, and how the instructions read it."""
    arch: Optional[str] = None
    dtype: Optional[str] = None
    kind: Optional[str] = None
    major: Optional[str] = None
    mn: Optional[int] = None
    k_tile: Optional[int] = None
    swizzle: Optional[str] = None
    smem_address: Optional[int] = None
    layout: Optional[str] = None
    size_bytes: Optional[int] = None
    alignment: Optional[int] = None
    tma: Optional[dict] = None
    instructions: Optional[list] = None
    proof: Optional[dict] = None
    violations: Optional[list] = None
    mma: Optional[dict] = None
    instr_desc: Optional[dict] = None


@dataclass(frozen=True, kw_only=True)
class TmaCheck(CommandResult):
    """tma check: would the driver's encoder accept the tensor map."""
    legal: Optional[bool] = None
    violations: Optional[list] = None
    warnings: Optional[list] = None
    malformed: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class TmaSchema(CommandResult):
    """tma schema: the JSON Schema of a tensor-map document; the whole document is `schema`."""
    schema: Optional[dict] = None

    @classmethod
    def json_keys(cls) -> set:
        return set()          # its keys are the schema's own keywords, not this command's

    @classmethod
    def from_document(cls, command, exit_status, document):
        return cls(command=command, exit_status=exit_status, document=document, schema=document)


@dataclass(frozen=True, kw_only=True)
class TmaPlace(CommandResult):
    """tma place: the shared-memory address of every box element."""
    swizzle: Optional[str] = None
    elem_bytes: Optional[int] = None
    box: Optional[list] = None
    smem_address: Optional[int] = None
    offsets: Optional[list] = None
    violations: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class TmaBox(CommandResult):
    """tma box: the largest legal box and swizzle, and the tensor map that makes it."""
    status: Optional[str] = None
    dataType: Optional[str] = None
    swizzle: Optional[str] = None
    box: Optional[list] = None
    bytes_per_load: Optional[int] = None
    loads: Optional[int] = None
    loads_along: Optional[list] = None
    tensor_map: Optional[dict] = None
    reasons: Optional[list] = None
    rejected: Optional[dict] = None
    spec_check: Optional[dict] = None


@dataclass(frozen=True, kw_only=True)
class TmemCheck(CommandResult):
    """tmem check: does ptxas take the instruction; what it breaks."""
    ptxas_accepts: Optional[bool] = None
    violations: Optional[list] = None
    undefined: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class TmemAccess(CommandResult):
    """tmem ld / tmem st: the cells one warp touches."""
    op: Optional[str] = None
    shape: Optional[str] = None
    num: Optional[int] = None
    pack: Optional[bool] = None
    lane: Optional[int] = None
    column: Optional[int] = None
    warp: Optional[int] = None
    target: Optional[str] = None
    count: Optional[int] = None
    extent: Optional[dict] = None
    cells: Optional[list] = None
    violations: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class TmemCp(CommandResult):
    """tmem cp: the lanes each source row goes to; the cells written here and in the peer CTA."""
    shape: Optional[str] = None
    multicast: Optional[str] = None
    cta_group: Optional[int] = None
    lane: Optional[int] = None
    column: Optional[int] = None
    row_lanes: Optional[list] = None
    own_cta: Optional[dict] = None
    peer: Optional[dict] = None


@dataclass(frozen=True, kw_only=True)
class TmemShift(CommandResult):
    """tmem shift: the rows tcgen05.shift.down moves."""
    lane: Optional[int] = None
    column: Optional[int] = None
    moves: Optional[list] = None
    count: Optional[int] = None
    extent: Optional[dict] = None
    cells: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class TmemAlloc(CommandResult):
    """tmem alloc: the allocation rules the sequence breaks."""
    violations: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class TmemMap(CommandResult):
    """tmem map: the cell of every register piece of every thread."""
    op: Optional[str] = None
    shape: Optional[str] = None
    num: Optional[int] = None
    pack: Optional[bool] = None
    half_splitoff: Optional[int] = None
    registers_per_thread: Optional[int] = None
    pieces: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class TmemPlan(CommandResult):
    """tmem plan: the tcgen05.ld sequence that reads D, who holds each element, and the check."""
    status: Optional[str] = None
    reason: Optional[str] = None
    rules: Optional[list] = None
    objective: Optional[str] = None
    accumulator: Optional[dict] = None
    warps: Optional[list] = None
    registers: Optional[int] = None
    excluded: Optional[dict] = None
    shape: Optional[str] = None
    pack: Optional[bool] = None
    instructions: Optional[list] = None
    per_warp: Optional[list] = None
    idle_warps: Optional[list] = None
    holders: Optional[list] = None
    check: Optional[dict] = None
    register_file: Optional[dict] = None
    at: Optional[dict] = None
    ptx: Optional[str] = None


@dataclass(frozen=True, kw_only=True)
class ScalesMap(CommandResult):
    """scales map: where a writer layout puts each scale."""
    sf_layout: Optional[str] = None
    rows: Optional[int] = None
    k: Optional[int] = None
    block: Optional[int] = None
    k_blocks: Optional[int] = None
    footprint: Optional[int] = None
    offsets: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class ScalesCheck(CommandResult):
    """scales check: a writer layout against the reader; the first element given another scale."""
    sf_layout: Optional[str] = None
    kind: Optional[str] = None
    scale_vec: Optional[str] = None
    block: Optional[int] = None
    rows: Optional[int] = None
    k: Optional[int] = None
    copy: Optional[str] = None
    misread: Optional[dict] = None


@dataclass(frozen=True, kw_only=True)
class ScalesPlan(CommandResult):
    """scales plan: the scale loads, copies and per-k-step scale operands of a block-scaled tile."""
    status: Optional[str] = None
    kind: Optional[str] = None
    m: Optional[int] = None
    n: Optional[int] = None
    k: Optional[int] = None
    cta_group: Optional[int] = None
    sf_layout: Optional[str] = None
    scale_vec: Optional[str] = None
    scale_type: Optional[str] = None
    block: Optional[int] = None
    objective: Optional[str] = None
    rules: Optional[list] = None
    minimal_core: Optional[list] = None
    always_broken: Optional[list] = None
    rejected: Optional[dict] = None
    operands: Optional[dict] = None
    copies: Optional[list] = None
    steps: Optional[list] = None
    tmem: Optional[dict] = None
    check: Optional[dict] = None


@dataclass(frozen=True, kw_only=True)
class Im2col(CommandResult):
    """im2col: the pixels a load brings and where each lands in shared memory."""
    mode: Optional[str] = None
    layout: Optional[str] = None
    tensor: Optional[list] = None
    bounding_box: Optional[dict] = None
    row_bytes: Optional[int] = None
    smem_address: Optional[int] = None
    swizzle: Optional[str] = None
    pixels: Optional[list] = None
    placement: Optional[list] = None
    violations: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class Prove(CommandResult):
    """prove: one result per property (or the --layout property): status proved / refuted / unknown."""
    results: Optional[list] = None
    properties: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class Rules(CommandResult):
    """rules: the catalogue's rules."""
    rules: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class Fuzz(CommandResult):
    """fuzz: the cases (each labelled by spec), their stats, and with --against the differences."""
    target: Optional[str] = None
    arch: Optional[str] = None
    cases: Optional[list] = None
    stats: Optional[dict] = None
    differences: Optional[list] = None
    targets: Optional[dict] = None


@dataclass(frozen=True, kw_only=True)
class PtxDescriptors(CommandResult):
    """ptx descriptors: the descriptor each MMA site is fed, and what was not read."""
    smem_base: Optional[int] = None
    functions: Optional[list] = None
    shared: Optional[dict] = None
    launch: Optional[dict] = None
    runs: Optional[dict] = None
    sites: Optional[list] = None
    others: Optional[list] = None
    unread: Optional[list] = None
    files: Optional[list] = None
    summary: Optional[dict] = None


@dataclass(frozen=True, kw_only=True)
class PtxCheck(CommandResult):
    """ptx check: each MMA site's reads against your layout."""
    smem_base: Optional[int] = None
    functions: Optional[list] = None
    layouts: Optional[dict] = None
    checks: Optional[list] = None
    summary: Optional[dict] = None
    unread: Optional[list] = None


@dataclass(frozen=True, kw_only=True)
class Audit(CommandResult):
    """audit: per kernel, whether every element each MMA reads comes from the TMA load made for it."""
    kernels: Optional[list] = None
    assumptions: Optional[list] = None
    files: Optional[list] = None
    summary: Optional[dict] = None
