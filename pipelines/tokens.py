"""Token counting with tiktoken, from the encodings vendored in pipelines/encodings (never downloaded)."""

import os
import threading
from functools import cache
from pathlib import Path

import tiktoken

VENDORED = Path(__file__).resolve().parent / "encodings"
_env_lock = threading.Lock()


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
    """Token counts of many texts at once, on tiktoken's own threads."""
    return [len(ids) for ids in encoding(name).encode_ordinary_batch(texts, num_threads=4)]
