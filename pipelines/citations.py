"""Written text whose every sentence cites chunk ids of its own inputs: the prompt files, a model's reply
parsed and verified, one retry with the error stated, the verified sentences rendered as one text.

A reply is JSON only: {"sentences": [{"text": "...", "cites": ["chunk_id", ...]}]}. It is rejected when it
is not that or puts brackets in a sentence's text (malformed), holds no sentence (empty), has a sentence
citing nothing (uncited), cites a chunk outside the allowed set (invented citation), was cut at the
model's length limit (truncated) or ran past the bytes a reply may take (oversized: not read whole). Verified,
it is rendered "Sentence one. [c1] [c2] Sentence two. [c3]": each sentence, then its cites in brackets.
"""

import hashlib
from collections.abc import Collection, Sequence
from functools import cache
from pathlib import Path
from typing import NamedTuple

from acervo.pipelines.llm import (
    MAX_REPLY_BYTES,
    UNREAD,
    Completion,
    LLMError,
    Message,
    Meter,
    OverBudget,
    Oversized,
    Refused,
    Unavailable,
    Usage,
    loads,
)

PROMPTS = Path(__file__).parent / "prompts"  # the prompt files, shipped as package data
VERSION_CHARS = 12  # hex digits of a prompt file's sha256 that name its version
FENCE = "```"  # a reply wrapped in one Markdown code fence is read inside it
RETRY = ("Your reply was rejected: {error}. Reply again with JSON only, in the same shape, every sentence citing "
         "only chunk ids listed above.")  # the user message of the one retry
CITABLE = "Chunk ids you may cite: "  # opens the last line of each prompt's user message
OVERSIZED = f"oversized: longer than {MAX_REPLY_BYTES} bytes"  # the reason a reply too long to read is rejected


class Prompt(NamedTuple):
    """A prompt file's text (the system message) and its version: an edit of the file changes it."""

    text: str
    version: str


@cache
def prompt(name: str) -> Prompt:
    """The prompt file `name`.txt of pipelines/prompts."""
    text = (PROMPTS / f"{name}.txt").read_text(encoding="utf-8")
    return Prompt(text, hashlib.sha256(text.encode("utf-8")).hexdigest()[:VERSION_CHARS])


class Checked(NamedTuple):
    """A reply verified: its rendered text and the chunks it cites, or (text None) why it was rejected."""

    text: str | None
    refs: tuple[str, ...] = ()
    error: str | None = None


def check(reply: Completion | Oversized, allowed: Collection[str]) -> Checked:
    """`reply` parsed and verified against the chunk ids `allowed` (a reply too long to read: rejected)."""
    if isinstance(reply, Oversized):
        return Checked(None, error=OVERSIZED)
    if reply.truncated:
        return Checked(None, error="truncated")
    found = _sentences(reply.text)
    if isinstance(found, str):
        return Checked(None, error=found)
    if not found:
        return Checked(None, error="empty")
    parts, refs = [], []
    for place, (text, cites) in enumerate(found, start=1):
        if not cites:
            return Checked(None, error=f"uncited: sentence {place}")
        if invented := [c for c in cites if c not in allowed]:
            return Checked(None, error=f"invented citation {invented[0]}")
        parts.append(" ".join([text, *(f"[{c}]" for c in cites)]))
        refs += cites
    return Checked(" ".join(parts), tuple(dict.fromkeys(refs)))


def _sentences(reply: str) -> list[tuple[str, list[str]]] | str:
    """The (text, cites) of each sentence of a reply, whitespace collapsed and cites once each; or the
    reason it is malformed."""
    body = reply.strip()
    if body.startswith(FENCE) and body.endswith(FENCE) and len(body) > 2 * len(FENCE):
        body = body[len(FENCE):-len(FENCE)].removeprefix("json").strip()
    try:
        data = loads(body)
    except ValueError:  # malformed, or nested too deeply to read
        return "malformed: not JSON"
    if not isinstance(data, dict) or not isinstance(data.get("sentences"), list):
        return 'malformed: no list "sentences"'
    found = []
    for place, item in enumerate(data["sentences"], start=1):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not isinstance(
                item.get("cites", []), list) or not all(isinstance(c, str) for c in item.get("cites", [])):
            return f'malformed: sentence {place} is not {{"text": "...", "cites": [...]}}'
        text = " ".join(item["text"].split())
        if not text:
            return f"malformed: sentence {place} has no text"
        if "[" in text or "]" in text:
            return f"malformed: sentence {place} has brackets in its text (cites go in \"cites\")"
        found.append((text, list(dict.fromkeys(c.strip() for c in item.get("cites", []) if c.strip()))))
    return found


class Written(NamedTuple):
    """What writing one row came to: its text and refs (text None: the extractive text stands, for `reason`);
    `stored` False when the row is not to be kept (the budget ran out, or the endpoint failed), so that the
    next run tries it again (a refused request is kept, with its reason); `rewrites`: replies asked again
    after failing verification."""

    text: str | None
    refs: tuple[str, ...]
    reason: str | None
    stored: bool = True
    rewrites: int = 0


def write(meter: Meter, messages: Sequence[Message], allowed: Collection[str]) -> Written:
    """Ask the model for `messages` and verify its reply; when it fails, ask once more with that reply (one too
    long to read: not repeated) and its error stated, and keep the extractive text if the second fails too. A
    request the endpoint refuses (Refused) keeps the extractive text with the refusal as its reason; OverBudget
    and a failed call give an unstored row; Unavailable propagates (the run fails)."""
    reply = _ask(meter, messages)
    if isinstance(reply, Written):
        return reply
    first = check(reply, allowed)
    if first.text is not None:
        return Written(first.text, first.refs, None)
    shown = reply.text if isinstance(reply, Completion) else UNREAD
    second = _ask(meter, [*messages, {"role": "assistant", "content": shown},
                          {"role": "user", "content": RETRY.format(error=first.error)}])
    if isinstance(second, Written):
        return second._replace(rewrites=1)
    again = check(second, allowed)
    return Written(again.text, again.refs, again.error, rewrites=1)


def _ask(meter: Meter, messages: Sequence[Message]) -> Completion | Oversized | Written:
    """The model's reply (Oversized: one too long to read, which `check` rejects), or the row without text when
    there is none: refused (stored with the refusal: the same request would be refused again), over budget or
    failed (an answer that is no completion; both unstored, so the next run asks again)."""
    try:
        return meter(messages)
    except OverBudget:
        return Written(None, (), "over budget", stored=False)
    except Unavailable:
        raise
    except Refused as err:
        return Written(None, (), f"refused: {err}")
    except Oversized as err:
        return err
    except LLMError:
        return Written(None, (), "failed", stored=False)


class Task(NamedTuple):
    """One row to write: its key, the messages asking for it, the chunks its prompt drew on (the citations
    allowed) and its input hash."""

    key: str
    messages: list[Message]
    inputs: tuple[str, ...]
    input_hash: str


def generate(meter: Meter, tasks: list[Task]) -> list[Written]:
    """Each task written (`write`), at most the meter's concurrency at a time, in the tasks' order; the rows
    that keep their extractive text are counted on the meter as fallbacks."""
    done = meter.map(lambda task: write(meter, task.messages, task.inputs), tasks)
    meter.fell_back(sum(1 for w in done if w.text is None))
    return done


def detail(meter: Meter, before: Usage, done: list[Written]) -> dict[str, int]:
    """A stage's ledger detail: what its calls cost since `before` (the meter's usage when it began), the
    rows written, those that keep their extractive text, the replies asked again, and the rows left for the
    next run because the budget ran out or the call failed."""
    return {**meter.usage_since(before)._asdict(), "written": sum(1 for w in done if w.text is not None),
            "rejected": sum(1 for w in done if w.stored and w.text is None),
            "rewrites": sum(w.rewrites for w in done),
            "over_budget": sum(1 for w in done if w.reason == "over budget"),
            "failed": sum(1 for w in done if w.reason == "failed")}


def messages(system: Prompt, user: str) -> list[Message]:
    """The messages of one request: the prompt file as the system message, the row's material as the user's."""
    return [{"role": "system", "content": system.text}, {"role": "user", "content": user}]


def allowed_line(inputs: Sequence[str]) -> str:
    """The user message's last line: the chunk ids a reply may cite."""
    return CITABLE + ", ".join(inputs)
