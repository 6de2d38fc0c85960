"""API keys bound to scopes: a JSON file the operator keeps maps the SHA-256 of each key (never the key) to the
scopes it may read; a caller cannot widen them.

    {"keys": [{"name": "tenant-a", "sha256": "<hex of the key's SHA-256>", "scopes": ["tenant-a"]},
              {"name": "ops", "sha256": "...", "scopes": null}]}

`"scopes": null` reads every document; `[]` only documents without a scope. `printf %s "$KEY" | sha256sum` gives a
key's hash.
"""

import hashlib
import hmac
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class KeyIn(BaseModel):
    """One key of the file."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    scopes: list[str] | None


class KeysIn(BaseModel):
    """The keys file."""

    model_config = ConfigDict(extra="forbid")
    keys: list[KeyIn] = Field(min_length=1)


@dataclass(frozen=True)
class Caller:
    """Who a request comes from: the key's name, and the scopes it may read (None: every document)."""

    name: str
    scopes: list[str] | None


def hashed(key: str) -> str:
    """A key as the keys file holds it: the hex SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class Keys:
    """The keys of a keys file, looked up by the key a request presents."""

    def __init__(self, path: Path) -> None:
        """Read `path`; ValueError naming the file and what is wrong when it cannot be used."""
        try:
            found = KeysIn.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, ValidationError) as err:
            raise ValueError(f"{path}: not a usable keys file: {err}") from None
        self.keys = [(k.sha256, Caller(k.name, k.scopes)) for k in found.keys]

    def caller(self, key: str) -> Caller | None:
        """The caller a presented key is, or None for a key the file does not hold (every hash compared in
        constant time)."""
        digest = hashed(key)
        found = None
        for sha, caller in self.keys:
            if hmac.compare_digest(sha, digest):
                found = caller
        return found

    def bearer(self, authorization: str) -> Caller | None:
        """The caller an Authorization header's value names ("Bearer KEY"), or None."""
        scheme, _, key = authorization.partition(" ")
        return self.caller(key.strip()) if scheme.lower() == "bearer" and key.strip() else None
