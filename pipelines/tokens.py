"""Token counting with tiktoken, from the encodings vendored in pipelines/encodings (never downloaded)."""

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import cache, partial
from pathlib import Path

import tiktoken

VENDORED = Path(__file__).resolve().parent / "encodings"
_env_lock = threading.Lock()
THREADS = 4  # threads that count a batch of texts
SHARES = 4 * THREADS  # tasks a batch is cut into: a share of long texts does not leave the other threads idle


@cache
def encoding(name: str = "cl100k_base") -> tiktoken.Encoding:
    """The named encoding, loaded and hash-checked from the vendored rank file."""
    with _env_lock:
        previous = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(VENDORED)
        try:
            return tiktoken.get_encoding(name)
        finally:
            if previous is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = previous


def count(text: str, name: str = "cl100k_base") -> int:
    """How many tokens `text` costs (special-token strings count as plain text)."""
    return len(encoding(name).encode_ordinary(text))


def counts(texts: list[str], name: str = "cl100k_base") -> list[int]:
    """Token counts of many texts at once, on THREADS threads (tiktoken encodes without the GIL), each task a
    share of SHARES: one task a text, as tiktoken's encode_ordinary_batch hands them out, costs more to hand over
    than a short text costs to count."""
    size = max(1, -(-len(texts) // SHARES))
    with ThreadPoolExecutor(THREADS) as pool:
        shares = pool.map(partial(_counts, encoding(name)), [texts[i : i + size] for i in range(0, len(texts), size)])
        return [n for share in shares for n in share]


def _counts(coding: tiktoken.Encoding, texts: list[str]) -> list[int]:
    """How many tokens each of `texts` costs in `coding`."""
    return [len(coding.encode_ordinary(text)) for text in texts]
