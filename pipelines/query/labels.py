"""Query: short citation labels. A context's text cites each chunk as [c1], [c2]... (numbered in reading order)
in place of its id, which costs several times the tokens, so that a budget holds more evidence; the context's
`labels` maps each label back to its chunk id, and every block's `refs` still lists chunk ids.

Labels are numbered twice: first over every candidate block, in the order selection weighs them, so that each
block is counted as it will be written; then over the chosen blocks, in the order they are read, and counted
again, before pruning, so that a pruned context keeps the labels of the blocks it kept. A label's digits cost
one token up to 999 in the shipped encodings, so numbering again seldom changes a count; where it would change
one, the first numbering stays, so that every count and the budget report hold.
"""

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

from acervo.pipelines.query.budget import Selection, Unit

PREFIX = "c"  # a label is [c1]: a bare [1] is also how many texts mark their own footnotes
LABEL = re.compile(rf"\[({PREFIX}\d+)\]")  # a label as a text writes it


def numbered(units: Sequence[Unit]) -> dict[str, str]:
    """Chunk id -> label, numbered in the order of the first of `units` that writes each id in brackets."""
    found: dict[str, str] = {}
    for unit in units:
        for ref in unit.refs:
            if ref not in found and f"[{ref}]" in unit.text:
                found[ref] = f"{PREFIX}{len(found) + 1}"
    return found


def written(text: str, refs: Sequence[str], labels: dict[str, str]) -> str:
    """`text` with each of `refs` written in brackets replaced by its label."""
    for ref in refs:
        if ref in labels:
            text = text.replace(f"[{ref}]", f"[{labels[ref]}]")
    return text


def candidates(units: Sequence[Unit]) -> tuple[list[Unit], dict[str, str]]:
    """The candidate `units` with their chunk ids written as labels, numbered in the order selection weighs them
    (score, then key); and the chunk id -> label map."""
    labels = numbered(sorted(units, key=lambda u: (-u.score, u.key)))
    return [replace(u, text=written(u.text, u.refs, labels)) for u in units], labels


def renumbered(chosen: Selection, cited: dict[str, Unit], labels: dict[str, str],
               count: Callable[[str], int]) -> tuple[Selection, dict[str, str]]:
    """The `chosen` (labelled) selection numbered again in reading order, from its units' texts with ids
    (`cited`, by key), and the label -> chunk id map of what it cites; with the candidate numbering (`labels`)
    where numbering again would change a count."""
    originals = [cited.get(u.key, u) for u in chosen.units]
    again = numbered(originals)
    texts = [written(u.text, u.refs, again) for u in originals]
    if [count(t) for t in texts] != chosen.tokens:
        return chosen, {labels[ref]: ref for ref in again}
    units = [replace(u, text=t) for u, t in zip(chosen.units, texts, strict=True)]
    return replace(chosen, units=units), {name: ref for ref, name in again.items()}


def kept(units: Sequence[Unit], named: dict[str, str]) -> dict[str, str]:
    """The labels of `named` that the `units` (what pruning kept) still write."""
    return {name: ref for name, ref in named.items() if any(f"[{name}]" in u.text for u in units)}


def resolved(blocks: Sequence[tuple[str, Sequence[str]]], named: dict[str, str], known: Collection[str]) -> bool:
    """Whether every citation of a context's `blocks` ((text, refs) each) resolves: every ref is a chunk of the
    index (`known`), and every label a block's text writes stands (`named`) for one of that block's refs."""
    return all(all(ref in known for ref in refs) and all(named.get(name) in refs for name in LABEL.findall(text))
               for text, refs in blocks)
