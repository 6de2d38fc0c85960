"""Content hashes: how a stage tells that its input changed (documents, chunks, communities)."""

import unicodedata
from hashlib import sha256


def content_hash(*parts: str) -> str:
    """A stable sha256 of `parts`, each length-prefixed (`framed`) so that no choice of text can collide."""
    return sha256(b"".join(map(framed, parts))).hexdigest()


def framed(part: str) -> bytes:
    """`part` as content_hash hashes it: its length in UTF-8 bytes, a colon, and those bytes."""
    data = part.encode("utf-8")
    return b"%d:%b" % (len(data), data)


def text_hash(text: str) -> str:
    """sha256 of `text` in Unicode NFC: every change a quoted sentence could show changes it."""
    return sha256(unicodedata.normalize("NFC", text).encode("utf-8")).hexdigest()
