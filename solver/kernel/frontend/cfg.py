"""Control flow of one function: basic blocks, their edges, dominators and natural loops.

PTX ISA 9.0, 9.7.13 (control flow): `bra` jumps to a label, `@p bra` when p holds (else falls through),
`brx.idx` to the i-th label of a `.branchtargets` list, `ret` and `exit` leave, `call` returns to the next
statement. A natural loop is the set of blocks of a back edge u -> h where h dominates u: compilers place
the header anywhere in the text (Triton's persistent loops jump forward to a header placed after the
latch), so loops are found on the graph, never on the text order.

A wait loop is a natural loop that only polls an mbarrier (PTX ISA 9.7.13.15.16, mbarrier.test_wait /
try_wait): its body writes nothing but the predicate it branches on, so every later statement sees the
registers as they were when the wait began; the executors take it as a wait that completes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import networkx as nx

from solver.kernel.frontend.instruction import destinations

ENDS_THREAD = ("ret", "exit", "trap")
WAIT_OPCODES = ("mbarrier.try_wait", "mbarrier.test_wait")


@dataclass
class Block:
    index: int
    first: int                      # statement indexes [first, last]
    last: int
    successors: list = field(default_factory=list)    # block indexes: taken first, then the fall-through
    targets: Optional[list] = None  # a brx.idx's: the block of each label of its .branchtargets, in order


@dataclass
class Loop:
    header: int                     # block index
    latches: list                   # blocks with a back edge to the header
    blocks: frozenset               # every block of the loop, the header included
    header_line: int
    wait: bool = False              # an mbarrier wait loop (see the module)
    parent: Optional[int] = None    # index in Graph.loops of the innermost loop holding this one

    def __contains__(self, block: int) -> bool:
        return block in self.blocks


@dataclass
class Graph:
    statements: list                # syntax.Statement of the function, flattened
    blocks: list
    block_of: list                  # statement index -> block index
    loops: list                     # Loop, outermost first
    indirect: bool                  # a brx.idx whose targets are not all known
    unreachable: frozenset          # blocks no path from the entry reaches
    _post_dominators: Optional[dict] = None
    _dominators: Optional[dict] = None

    def post_dominator(self, block: int) -> Optional[int]:
        """The block every path from this one to the function's end passes first (its immediate
        post-dominator), or None (only the end itself, or no path reaches the end)."""
        if self._post_dominators is None:
            self._post_dominators = _post_dominators(self.blocks)
        found = self._post_dominators.get(block)
        return None if found is None or found == _EXIT or found == block else found

    def dominates(self, a: int, b: int) -> bool:
        """Every path from the entry to block b passes block a (a dominates itself)."""
        if self._dominators is None:
            graph = nx.DiGraph()
            graph.add_nodes_from(range(len(self.blocks)))
            graph.add_edges_from((blk.index, s) for blk in self.blocks for s in blk.successors)
            self._dominators = nx.immediate_dominators(graph, 0) if self.blocks else {}
        while True:
            if b == a:
                return True
            parent = self._dominators.get(b)
            if parent is None or parent == b:
                return False
            b = parent

    @property
    def reducible(self) -> bool:
        """Every cycle goes through a loop header that dominates it: each edge back to a block on the
        depth-first path (a retreating edge) enters a block dominating its source. Compilers emit such
        graphs; in another (a jump into a loop's middle) a cycle holds no natural loop, and what is
        argued from "the same loops" does not hold."""
        found = self.__dict__.get("_reducible")
        if found is None:
            found = True
            if self.blocks:
                on_path, done, stack = {0}, set(), [(0, iter(self.blocks[0].successors))]
                while stack and found:
                    block, successors = stack[-1]
                    successor = next(successors, None)
                    if successor is None:
                        stack.pop()
                        on_path.discard(block)
                        done.add(block)
                    elif successor in on_path:
                        found = self.dominates(successor, block)
                    elif successor not in done:
                        on_path.add(successor)
                        stack.append((successor, iter(self.blocks[successor].successors)))
            self.__dict__["_reducible"] = found
        return found

    def loops_holding(self, block: int) -> list:
        """The loops that hold the block, outermost first."""
        return [loop for loop in self.loops if block in loop.blocks]


def _branch_targets(statements: list) -> dict:
    """name of a `.branchtargets` list -> its labels (PTX ISA 11.3.2: `name: .branchtargets L1, L2;`)."""
    tables, pending = {}, None
    for s in statements:
        if s.label is not None:
            pending = s.label
            continue
        if pending is not None and s.text.startswith(".branchtargets "):
            tables[pending] = [t.strip() for t in s.text[len(".branchtargets "):].split(",")]
        pending = None
    return tables


def build(statements: list) -> Graph:
    labels = {s.label: i for i, s in enumerate(statements) if s.label is not None}
    tables = _branch_targets(statements)
    leaders, indirect = {0}, False
    for i, s in enumerate(statements):
        ins = s.instruction
        if s.label is not None:
            leaders.add(i)
        elif ins is not None and (ins.base in ("bra", "brx") or ins.base in ENDS_THREAD):
            leaders.add(i + 1)
    starts = sorted(x for x in leaders if x < len(statements)) or [0]
    blocks, block_of = [], [0] * len(statements)
    for k, first in enumerate(starts):
        last = (starts[k + 1] if k + 1 < len(starts) else len(statements)) - 1
        blocks.append(Block(k, first, last))
        for i in range(first, last + 1):
            block_of[i] = k
    for block in blocks:
        ins = statements[block.last].instruction if statements else None
        falls = block.index + 1 if block.index + 1 < len(blocks) else None
        if ins is None:
            block.successors = [falls] if falls is not None else []
            continue
        unguarded = ins.guard is None
        if ins.base == "bra" and ins.operands and ins.operands[0] in labels:
            taken = block_of[labels[ins.operands[0]]]
            block.successors = [taken] if unguarded else [taken] + ([falls] if falls is not None else [])
        elif ins.base == "brx":
            named = tables.get(ins.operands[-1]) if ins.operands else None
            if named is None or any(t not in labels for t in named):
                indirect = True
                named = [name for name in labels]
            else:
                block.targets = [block_of[labels[t]] for t in named]
            block.successors = sorted({block_of[labels[t]] for t in named}) + \
                ([falls] if not unguarded and falls is not None else [])
        elif ins.base in ENDS_THREAD and unguarded:
            block.successors = []
        else:
            block.successors = [falls] if falls is not None else []
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(blocks)))
    graph.add_edges_from((b.index, s) for b in blocks for s in b.successors)
    reachable = nx.descendants(graph, 0) | {0} if blocks else set()
    loops = _natural_loops(graph, blocks, statements, reachable)
    return Graph(statements, blocks, block_of, loops, indirect, frozenset(set(range(len(blocks))) - reachable))


_EXIT = -1


def _post_dominators(blocks: list) -> dict:
    reverse = nx.DiGraph()
    reverse.add_node(_EXIT)
    reverse.add_nodes_from(range(len(blocks)))
    for b in blocks:
        reverse.add_edges_from((s, b.index) for s in b.successors)
        if not b.successors:
            reverse.add_edge(_EXIT, b.index)
    return nx.immediate_dominators(reverse, _EXIT)


def _natural_loops(graph, blocks: list, statements: list, reachable: set) -> list:
    if not blocks:
        return []
    dominator = nx.immediate_dominators(graph, 0)

    def dominates(h: int, u: int) -> bool:
        while True:
            if u == h:
                return True
            parent = dominator.get(u)
            if parent is None or parent == u:
                return False
            u = parent

    by_header: dict = {}
    for u in sorted(reachable):
        for h in blocks[u].successors:
            if h in reachable and dominates(h, u):
                by_header.setdefault(h, []).append(u)
    loops = []
    for h, latches in by_header.items():
        body, stack = {h}, list(latches)
        while stack:
            n = stack.pop()
            if n not in body:
                body.add(n)
                stack.extend(p for p in graph.predecessors(n) if p in reachable)
        loop = Loop(h, sorted(latches), frozenset(body), statements[blocks[h].first].line)
        loop.wait = _is_wait(loop, blocks, statements)
        loops.append(loop)
    loops.sort(key=lambda loop: (-len(loop.blocks), loop.header))
    for i, loop in enumerate(loops):
        holders = [j for j, outer in enumerate(loops[:i]) if loop.blocks <= outer.blocks and outer is not loop]
        loop.parent = holders[-1] if holders else None
    return loops


def _is_wait(loop: Loop, blocks: list, statements: list) -> bool:
    """Only an mbarrier test/try wait writing a predicate, and branches on that predicate."""
    waited, branches = set(), []
    for b in loop.blocks:
        for i in range(blocks[b].first, blocks[b].last + 1):
            ins = statements[i].instruction
            if ins is None:
                continue
            if ins.opcode.startswith(WAIT_OPCODES):
                waited.update(destinations(ins))
            elif ins.base == "bra":
                branches.append(ins)
            else:
                return False
    return bool(waited) and all(ins.guard is None or ins.guard in waited for ins in branches)
