"""Query: pack ranked context units into a token budget without orphans, and report what it cost.

A unit is one block of context: the instruction, an entity with its short answer (for a neighbour,
together with the edge that brought it, so there is never an orphan node nor a dangling edge), a
chunk of evidence, a community report. A unit with a `parent` can only enter after its parent.
A unit that quotes a chunk (an extractive short answer) is left out once that chunk is in and only chunks
hang from it: the context does not pay twice for the same words.
"""

import heapq
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from acervo.pipelines.query.scoring import SCORE_DIGITS

Count = Callable[[str], int]
INSTRUCTION = "instruction"


@dataclass(frozen=True)
class Unit:
    """A candidate block: its kind, unique key, text, cited chunk ids, score, the unit it hangs from and the chunk
    whose text holds its words (`quotes`: an extractive short answer's chunk)."""

    kind: str
    key: str
    text: str
    refs: tuple[str, ...] = ()
    score: float = 0.0
    parent: str | None = None
    quotes: str | None = None


@dataclass
class Selection:
    """The chosen units in order, and the budget report."""

    units: list[Unit]
    tokens: list[int]
    total: int
    refused: list[str] = field(default_factory=list)
    candidates: int = 0

    @property
    def spent(self) -> int:
        """Tokens used."""
        return sum(self.tokens)

    @property
    def by_kind(self) -> dict[str, int]:
        """Tokens used per kind of unit."""
        out: dict[str, int] = {}
        for unit, n in zip(self.units, self.tokens, strict=True):
            out[unit.kind] = out.get(unit.kind, 0) + n
        return out

    @property
    def truncation_rate(self) -> float:
        """Share of candidate units (the instruction excluded, each counted once) left out."""
        return len(self.refused) / self.candidates if self.candidates else 0.0

    @property
    def components(self) -> int:
        """Connected pieces among the chosen units: one per chosen root (a unit without parent)."""
        return sum(1 for u in self.units if u.parent is None and u.kind != INSTRUCTION)


def key(kind: str, ident: str) -> str:
    """A unit's unique key: its kind and id as a JSON array, so no id can pass for another kind's."""
    return json.dumps([kind, ident], ensure_ascii=False)


def chunk(chunk_id: str, text: str, score: float, parent: str | None = None) -> Unit:
    """A chunk's unit: its id, then its text, citing itself."""
    return Unit("chunk", key("chunk", chunk_id), f"[{chunk_id}] {text}", (chunk_id,), round(score, SCORE_DIGITS),
                parent)


def select(units: Sequence[Unit], *, budget: int, count: Count) -> Selection:
    """Best-first expansion from the roots: the highest-scoring available unit that fits enters next.

    The instruction always enters whole, first. A unit becomes available once its parent is in; a
    unit that does not fit is refused and the next one is tried (a smaller sibling may still fit).
    Ties go to the smaller key, so the result never depends on input order. Then the units that repeat a
    chosen chunk make room for the best of those refused (`_unrepeated`).
    """
    others = [u for u in units if u.kind != INSTRUCTION]
    chosen = _with_instruction([u for u in units if u.kind == INSTRUCTION], budget, count, candidates=len(others))
    _expand(chosen, others, budget - chosen.spent, count)
    _unrepeated(chosen, others, budget, count)
    return chosen


def sliced(instruction: list[Unit], groups: Sequence[tuple[float, Sequence[Unit]]], *, budget: int,
           count: Count) -> Selection:
    """Per-kind slices after the instruction, each with its share of what the instruction left plus what
    earlier slices left unused (never taking from one before it); inside a slice, best-first expansion
    as in `select`, a unit entering only once its parent is in; then, as there, the units that repeat a chosen
    chunk make room for the best of those refused, of any slice."""
    chosen = _with_instruction(instruction, budget, count, candidates=sum(len(g) for _, g in groups))
    usable = max(budget - chosen.spent, 0)
    spare = 0
    for share, group in groups:
        spare = _expand(chosen, group, int(usable * share) + spare, count)
    _unrepeated(chosen, [u for _, group in groups for u in group], budget, count)
    return chosen


def _with_instruction(instruction: list[Unit], budget: int, count: Count, *, candidates: int) -> Selection:
    """A selection that starts with the instruction, whole, whatever the budget."""
    chosen = Selection([], [], budget, candidates=candidates)
    for unit in instruction:
        chosen.units.append(unit)
        chosen.tokens.append(count(unit.text))
    return chosen


def _expand(chosen: Selection, units: Sequence[Unit], allowance: int, count: Count) -> int:
    """Best-first expansion of `units` into `chosen` within `allowance` tokens; return what is left.

    Available: a unit without parent or whose parent is in; the best available (score, then smaller
    key) enters if it fits, else it is refused; its children become available. Units never available
    are refused at the end.
    """
    pending = {u.key: u for u in units}
    children: dict[str | None, list[Unit]] = {}
    for unit in pending.values():
        children.setdefault(unit.parent, []).append(unit)
    inside = {u.key for u in chosen.units}
    queue = [(-u.score, u.key) for u in pending.values() if u.parent is None or u.parent in inside]
    heapq.heapify(queue)
    while queue:
        _, key = heapq.heappop(queue)
        unit = pending.pop(key)
        cost = count(unit.text)
        if cost > allowance:
            chosen.refused.append(key)
            continue
        chosen.units.append(unit)
        chosen.tokens.append(cost)
        allowance -= cost
        for child in children.get(key, []):
            heapq.heappush(queue, (-child.score, child.key))
    chosen.refused += sorted(pending)
    return allowance


def _unrepeated(chosen: Selection, units: Sequence[Unit], budget: int, count: Count) -> None:
    """Leave out of `chosen` every unit that quotes a chosen chunk and that nothing but chunks hangs from (a chunk
    stands alone; an edge needs both its ends), and expand the refused `units` into the tokens it frees; again
    until none is left out (each unit at most once)."""
    left_out: set[str] = set()
    while repeats := _repeats(chosen):
        left_out |= repeats
        kept = _folded(chosen, repeats, left_out)
        chosen.units, chosen.tokens = [u for u, _ in kept], [n for _, n in kept]
        again = set(chosen.refused) - left_out
        chosen.refused = []
        _expand(chosen, [_rooted(u, left_out) for u in units if u.key in again], budget - chosen.spent, count)
    chosen.refused += sorted(left_out)


def _repeats(chosen: Selection) -> set[str]:
    """The keys of the chosen units that quote a chosen chunk and that no chosen unit but a chunk hangs from."""
    held = {ref for u in chosen.units if u.kind == "chunk" for ref in u.refs}
    parents = {u.parent for u in chosen.units if u.kind != "chunk"}
    return {u.key for u in chosen.units if u.quotes in held and u.key not in parents}


def _folded(chosen: Selection, repeats: set[str], left_out: set[str]) -> list[tuple[Unit, int]]:
    """The chosen (unit, tokens) but the `repeats`, each chunk they quote read where the first of them was when it
    came later and now hangs from nothing, so that what the context cites first stays first."""
    place = {u.quotes: i for i, u in reversed(list(enumerate(chosen.units))) if u.key in repeats}
    kept = [(i, _rooted(u, left_out), n) for i, (u, n) in enumerate(zip(chosen.units, chosen.tokens, strict=True))
            if u.key not in repeats]
    moved = [(min(i, place.get(u.refs[0], i)) if u.kind == "chunk" and u.parent is None else i, u, n)
             for i, u, n in kept]
    return [(u, n) for _, u, n in sorted(moved, key=lambda row: row[0])]


def _rooted(unit: Unit, left_out: set[str]) -> Unit:
    """`unit` without its parent when it is a chunk whose parent was left out, else as it is."""
    return replace(unit, parent=None) if unit.kind == "chunk" and unit.parent in left_out else unit
