"""A language model behind one function: chat messages in, a completion out.

acervo ships no model and needs none: without one every stage stays extractive and nothing touches the
network. `openai_compatible` speaks the `/chat/completions` API of local servers (llama.cpp, Ollama, vLLM)
and hosted ones; an assembler may pass any other function of the same shape (`Chat`). `Meter` wraps either
with the run's budget, its bounded concurrency and the counts the run ledger records.
"""

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, TypeVar

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": text}
API_KEY_VARIABLE = "ACERVO_LLM_API_KEY"  # sent as a bearer token when set; never stored or logged


class Completion(NamedTuple):
    """What one call gave back: the text, the tokens it cost, whether the model stopped at its length
    limit (a truncated reply), and how many times the request was sent again after a fault."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    truncated: bool = False
    retries: int = 0


Chat = Callable[[Sequence[Message]], Completion | str]  # a plain str is a Completion without counts


class LLMError(RuntimeError):
    """One call failed for good: a reply that is not a completion (not JSON, no choices)."""


class Unavailable(LLMError):
    """The model could not be reached or kept failing after every retry: the run stops and publishes nothing."""


class OverBudget(LLMError):
    """The run's budget of calls or tokens is spent: the rows still to write keep their extractive text."""


T = TypeVar("T")
R = TypeVar("R")


def openai_compatible(url: str, model: str, *, timeout: float = 60.0, retries: int = 3, backoff: float = 0.5,
                      transport: object | None = None) -> Chat:
    """A Chat that posts to `url` + "/chat/completions" (e.g. http://127.0.0.1:8080/v1), temperature 0.

    Timeouts, refused connections, 429 (waiting its Retry-After) and 5xx are sent again up to `retries`
    times, `backoff` seconds doubling in between; then Unavailable. `transport` replaces the network."""
    raise NotImplementedError


class Usage(NamedTuple):
    """What a stage's calls cost, as its ledger `detail` records them."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    retries: int = 0
    fallbacks: int = 0
    milliseconds: int = 0


class Meter:
    """`chat` under a run's budget (`max_calls`, `max_tokens`: None for no limit) with at most `concurrency`
    calls in flight, counting what they cost (`usage`). Safe to call from several threads."""

    def __init__(self, chat: Chat, *, max_calls: int | None = None, max_tokens: int | None = None,
                 concurrency: int = 4) -> None:
        raise NotImplementedError

    def __call__(self, messages: Sequence[Message]) -> Completion:
        """One call; OverBudget (without calling) once the budget is spent."""
        raise NotImplementedError

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """`fn` over `items`, at most `concurrency` at a time, results in the items' order; the first
        Unavailable raised stops the rest and is raised again."""
        raise NotImplementedError

    def fell_back(self, n: int = 1) -> None:
        """Count `n` rows that kept their extractive text."""
        raise NotImplementedError

    @property
    def usage(self) -> Usage:
        """The counts so far."""
        raise NotImplementedError
