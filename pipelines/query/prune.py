"""Query: the listwise pruner: a grader sees the question and every chosen block together and grades each on a
five-level scale; the context keeps the ranking's first blocks, every block graded at least a threshold, and
the blocks those hang from (a block is never kept without its parent).

Relevance belongs to the set, not to one block (a block that says little alone may be half of the answer with
another), so a model grades all blocks in one call; each grade is defined in words, the same on every
question, so one threshold fits all questions. Pruning is paid for by what it saves: compression per point of
recall lost is its figure (tests/bench/bench_prune.py).
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acervo.pipelines.llm import (
    MAX_REPLY_BYTES,
    UNREAD,
    Chat,
    Completion,
    LLMError,
    Message,
    Oversized,
    Unavailable,
    loads,
)
from acervo.pipelines.query.budget import INSTRUCTION, Count, Selection

Grader = Callable[[str, list[str]], list[int]]  # question and block texts in, one grade 0-4 per block out
GRADES = range(5)  # 4 essential, 3 contributing, 2 supporting, 1 tangential, 0 unrelated (prompts/prune.txt)
KEEP_TOP = 2  # the ranking's first blocks are kept whatever their grade: its strongest, safe from a grading error
THRESHOLD = 3  # the least grade kept: what the answer needs (essential) or needs with others (contributing)
WINDOW = 8192  # tokens one grading call may fill (prompt, blocks, reply) when the model's window is not given
REPLY_TOKENS = 12  # tokens the reply spends on each block it grades ({"block": n, "grade": g}, ), kept free
RETRY_TOKENS = 64  # kept free beside the retry's own words for the error it states: a retry fits the window too
PROMPT = Path(__file__).resolve().parents[1] / "prompts" / "prune.txt"  # the grading call's system message
# the user message of the one retry, after an unusable reply
RETRY = ("Your reply could not be used: {error}. Reply again with only the JSON object, with exactly one grade "
         "from 0 to 4 for each of the blocks 1 to {n}.")


@dataclass
class Pruned:
    """What pruning a selection gave: the units kept in their order with each one's grade and why it stayed,
    each unit dropped with its grade and why, and what grading cost (`error`: why grading failed, every block
    then kept)."""

    kept: Selection
    grades: list[int | None]  # per kept unit; None for the instruction, and for every unit when grading failed
    reasons: list[str]  # per kept unit
    dropped: list[dict[str, Any]]  # kind, refs, grade, tokens, reason of each dropped unit, in the selection's order
    keep_top: int
    threshold: int
    tokens_before: int
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    error: str | None = None

    def report(self) -> dict[str, Any]:
        """The `pruned` field of a Context: settings, blocks and tokens before and after, the kept blocks' grades
        (in the blocks' order), the dropped blocks, the calls and model tokens grading spent, the error."""
        return {"keep_top": self.keep_top, "threshold": self.threshold,
                "blocks_before": len(self.kept.units) + len(self.dropped), "blocks_after": len(self.kept.units),
                "tokens_before": self.tokens_before, "tokens_after": self.kept.spent,
                "kept": [{"grade": g, "reason": r} for g, r in zip(self.grades, self.reasons, strict=True)],
                "dropped": self.dropped, "calls": self.calls, "model_tokens_in": self.tokens_in,
                "model_tokens_out": self.tokens_out, "error": self.error}


def prune(question: str, selection: Selection, grader: Grader, *, keep_top: int = KEEP_TOP,
          threshold: int = THRESHOLD) -> Pruned:
    """Grade every unit of `selection` but the instruction, and keep the first `keep_top` of them (in the
    selection's order), every one graded at least `threshold`, and every unit a kept one hangs from.

    A unit and those hanging from it (`Unit.parent`) are atomic: a kept child keeps its parent, so a dropped
    parent has only dropped children. A model whose grades stay unusable after its retry, in any batch, or
    whose budget is spent (LLMError, OverBudget) leaves every block kept, `error` saying why: the context is
    then what it is without pruning, and the caller is told. An unreachable model (Unavailable) fails the
    query: every later question would meet it too.
    """
    units = selection.units
    graded = [i for i, u in enumerate(units) if u.kind != INSTRUCTION]
    before = _usage(grader)
    result = Pruned(selection, [None] * len(units), [_kept_as(u.kind) for u in units], [], keep_top, threshold,
                    selection.spent)
    try:
        grades = _grades(grader, question, [units[i].text for i in graded]) if graded else []
    except Unavailable:
        raise
    except LLMError as err:
        result.error = f"{err}; every block kept"
        _spent(result, grader, before, graded)
        return result
    why = _kept(selection, graded, grades, keep_top, threshold)
    grade_of = dict(zip(graded, grades, strict=True))
    keep = [i for i in range(len(units)) if i not in grade_of or i in why]
    result.kept = Selection([units[i] for i in keep], [selection.tokens[i] for i in keep], selection.total,
                            selection.refused, selection.candidates)
    result.grades = [grade_of.get(i) for i in keep]
    result.reasons = [why.get(i, _kept_as(units[i].kind)) for i in keep]
    result.dropped = [{"kind": units[i].kind, "refs": list(units[i].refs), "grade": grade_of[i],
                       "tokens": selection.tokens[i], "reason": f"grade {grade_of[i]} < threshold {threshold}"}
                      for i in graded if i not in why]
    _spent(result, grader, before, graded)
    return result


def _kept(selection: Selection, graded: list[int], grades: list[int], keep_top: int,
          threshold: int) -> dict[int, str]:
    """Why each kept unit (by place in the selection) stays: among the first `keep_top`, graded at least
    `threshold`, or a kept unit hangs from it."""
    why: dict[int, str] = {}
    for place, (i, grade) in enumerate(zip(graded, grades, strict=True)):
        if place < keep_top:
            why[i] = f"among the first {keep_top}"
        elif grade >= threshold:
            why[i] = f"grade {grade} >= threshold {threshold}"
    place_of = {u.key: i for i, u in enumerate(selection.units)}
    for i in list(why):
        child = selection.units[i]
        parent = place_of.get(child.parent) if child.parent is not None else None
        while parent is not None and parent not in why:
            why[parent] = f"the kept {child.kind} {', '.join(child.refs)} hangs from it"
            child = selection.units[parent]
            parent = place_of.get(child.parent) if child.parent is not None else None
    return why


def _kept_as(kind: str) -> str:
    """Why an ungraded unit stays: the instruction always does; any other only when grading failed."""
    return "the instruction" if kind == INSTRUCTION else "not graded"


def _grades(grader: Grader, question: str, texts: list[str]) -> list[int]:
    """The grader's grades of `texts`; ValueError when a grader passed in gives a wrong count or grade."""
    grades = list(grader(question, texts))
    if len(grades) != len(texts):
        raise ValueError(f"the grader gave {len(grades)} grades for {len(texts)} blocks")
    for n, grade in enumerate(grades, start=1):
        if not _integer(grade) or grade not in GRADES:
            raise ValueError(f"the grader's grade {grade!r} of block {n} is not one of 0-4")
    return grades


def _usage(grader: Grader) -> tuple[int, int, int] | None:
    """A model grader's calls and tokens so far (None for a grader passed in, which counts as one call)."""
    return grader.usage if isinstance(grader, ModelGrader) else None


def _spent(result: Pruned, grader: Grader, before: tuple[int, int, int] | None, graded: list[int]) -> None:
    """Set what grading cost since `before`."""
    after = _usage(grader)
    if before is None or after is None:
        result.calls = 1 if graded else 0
        return
    result.calls, result.tokens_in, result.tokens_out = (a - b for a, b in zip(after, before, strict=True))


class ModelGrader:
    """A Grader asking a chat model: the question and every block, numbered, in one call (several only when
    they would overfill `window` tokens, counted with `count`), the reply checked, with one retry that states
    what was wrong; LLMError when the retry is unusable too. `usage`: its calls and model tokens so far."""

    def __init__(self, chat: Chat, *, window: int, count: Count, prompt: str) -> None:
        self.chat, self.window, self.count, self.prompt = chat, window, count, prompt
        # what every call spends before its question and blocks, with room for a retry's message
        self.fixed = count(prompt) + count(RETRY) + RETRY_TOKENS
        if window <= self.fixed + REPLY_TOKENS:
            raise ValueError(f"a pruning window of {window} tokens leaves no room for blocks: the prompt and "
                             f"the room kept for a retry take {self.fixed}")
        self.calls = self.tokens_in = self.tokens_out = 0

    @property
    def usage(self) -> tuple[int, int, int]:
        """Calls, tokens in and tokens out so far."""
        return self.calls, self.tokens_in, self.tokens_out

    def __call__(self, question: str, texts: list[str]) -> list[int]:
        """One grade 0-4 per text, the texts graded in as few calls as the window allows."""
        return [grade for batch in self.batches(question, texts) for grade in self._graded(question, batch)]

    def batches(self, question: str, texts: list[str]) -> list[list[str]]:
        """Consecutive runs of `texts` whose call, and its retry, fit the window (a block too large for any goes
        alone)."""
        fixed = self.fixed + self.count(_asked(question))
        found: list[list[str]] = []
        used = fixed
        for text in texts:
            cost = self.count(_block(len(found[-1]) + 1 if found else 1, text)) + 2 * REPLY_TOKENS
            if not found or used + cost > self.window:
                if found:
                    cost = self.count(_block(1, text)) + 2 * REPLY_TOKENS
                found.append([])
                used = fixed
            found[-1].append(text)
            used += cost
        return found

    def _graded(self, question: str, texts: list[str]) -> list[int]:
        """The grades of one batch: a call, and one retry stating what was wrong with the first reply."""
        messages: list[Message] = [{"role": "system", "content": self.prompt},
                                   {"role": "user", "content": _asked(question) + "".join(
                                       _block(n, t) for n, t in enumerate(texts, start=1))}]
        reply = self._call(messages)
        grades, error = parse(reply, len(texts))
        if error is None:
            return grades
        messages += [{"role": "assistant", "content": reply.text if isinstance(reply, Completion) else UNREAD},
                     {"role": "user", "content": RETRY.format(error=error, n=len(texts))}]
        grades, error = parse(self._call(messages), len(texts))
        if error is None:
            return grades
        raise LLMError(f"the pruning model's grades were unusable after a retry: {error}")

    def _call(self, messages: list[Message]) -> Completion | Oversized:
        """One call, counted; a reply too long to read is returned (unusable to `parse`), not raised."""
        self.calls += 1
        try:
            reply = self.chat(messages)
        except Oversized as err:
            return err
        reply = Completion(reply) if isinstance(reply, str) else reply
        self.tokens_in += reply.tokens_in
        self.tokens_out += reply.tokens_out
        return reply


def llm_grader(chat: Chat, *, window: int = WINDOW, count: Count) -> ModelGrader:
    """A Grader asking `chat` with the prompt pipelines/prompts/prune.txt; `window`: the tokens one call may
    fill, counted with `count` (the index's tokenizer, Index.count); ValueError when the prompt alone fills it."""
    return ModelGrader(chat, window=window, count=count, prompt=PROMPT.read_text(encoding="utf-8").strip())


def parse(reply: Completion | Oversized, n: int) -> tuple[list[int], str | None]:
    """The grades of blocks 1 to `n` in a reply {"grades": [{"block": b, "grade": g}, ...]} (fenced or not),
    or what is wrong with it: too long to read, cut short, not JSON (or nested too deeply to read), a block
    missing, unknown or graded twice, a grade not 0-4."""
    if isinstance(reply, Oversized):
        return [], f"the reply was longer than {MAX_REPLY_BYTES} bytes"
    if reply.truncated:
        return [], "the reply was cut at the model's length limit"
    text = reply.text
    start, end = text.find("{"), text.rfind("}")
    try:
        value = loads(text[start:end + 1] if 0 <= start < end else text)
    except json.JSONDecodeError as err:
        return [], f"the reply is not a JSON object ({err.msg})"
    entries = value.get("grades") if isinstance(value, dict) else None
    if not isinstance(entries, list):
        return [], 'the reply has no "grades" list'
    found: dict[int, int] = {}
    seen: set[int] = set()
    problems = [problem for entry in entries if (problem := _entry(entry, n, found, seen))]
    missing = [str(b) for b in range(1, n + 1) if b not in seen]
    if missing:
        problems.append(f"no grade for block{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    if problems:
        return [], "; ".join(problems)
    return [found[b] for b in range(1, n + 1)], None


def _entry(entry: Any, n: int, found: dict[int, int], seen: set[int]) -> str | None:
    """Record one {"block", "grade"} entry in `found` (and its block in `seen`), or say what is wrong with it."""
    block, grade = (entry.get("block"), entry.get("grade")) if isinstance(entry, dict) else (None, None)
    if not _integer(block) or not 1 <= block <= n:
        return f"{json.dumps(entry)} names no block from 1 to {n}"
    if block in seen:
        return f"block {block} is graded twice"
    seen.add(block)
    if not _integer(grade) or grade not in GRADES:
        return f"block {block} has grade {json.dumps(grade)}, not one of 0-4"
    found[block] = grade
    return None


def _integer(value: Any) -> bool:
    """Whether `value` is a whole number (a bool is not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _asked(question: str) -> str:
    """The start of a call's user message: the question."""
    return f"Question: {question}\n\nBlocks:"


def _block(n: int, text: str) -> str:
    """Block number `n` as the model reads it."""
    return f"\n\n### Block {n}\n{text}"
