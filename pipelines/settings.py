"""Settings and input records: the pydantic models at acervo's edges."""

import tomllib
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from acervo.pipelines.embeddings import API_KEY_VARIABLE as EMBED_KEY_VARIABLE
from acervo.pipelines.embeddings import PACKAGED
from acervo.pipelines.llm import API_KEY_VARIABLE, CONCURRENCY, TIMEOUT
from acervo.pipelines.names import CONTROL, blank

MentionMode = Literal["given", "gazetteer", "titles", "nlp", "spacy"]
CANDIDATE_MODES = ("nlp", "spacy")  # mentions modes that match stored per-chunk candidates, chosen corpus-wide in SQL
EdgeWindow = Literal["chunk", "paragraph", "sentence"]
Stemmer = Literal["auto", "porter", "arabic", "basque", "catalan", "danish", "dutch", "english", "finnish", "french",
                  "german", "greek", "hindi", "hungarian", "indonesian", "irish", "italian", "lithuanian", "nepali",
                  "norwegian", "portuguese", "romanian", "russian", "serbian", "spanish", "swedish", "tamil",
                  "turkish", "none"]  # DuckDB fts's stemmers, and auto: the corpus's language's (pipelines.terms)
RUN_KNOBS = ("llm_concurrency", "llm_max_calls", "llm_max_tokens", "llm_timeout", "workers", "shard_location",
             "shard_size")  # change no row: not remembered
# query parameters an endpoint URL may not carry: a name holding any of these (any case) names a credential: api_key,
# apiKey, x-api-key, access_token, client_secret, auth, Authorization, passwd, pwd, credential, sig, signature...
SECRET_PARAMETERS = ("key", "token", "secret", "auth", "pass", "pwd", "cred", "sig", "session", "bearer", "jwt")
SHARD_SIZE = 2_000  # documents or chunks a shard of the per-document work holds (pipelines.shards)
NLP_TOP_K = 32  # modes nlp and spacy find many weak pairs: bounded rows per entity keep the edge set near-linear


class Settings(BaseModel):
    """Every knob of an index run; part of the input hash of the rows it shapes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    encoding: Literal["cl100k_base", "o200k_base"] = Field("cl100k_base", description="tiktoken encoding that counts "
                                                           "chunk tokens")
    chunk_tokens: int = Field(400, ge=16, description="most tokens in one chunk")
    stemmer: Stemmer = Field("auto", description="how BM25 stems words: auto (the corpus's language's, read off its "
                             "function words: portuguese, spanish, german, romanian, turkish, russian, greek, arabic, "
                             "hindi, else porter: English), or one of DuckDB fts's stemmers (none: no stemming)")
    mentions: MentionMode = Field("given", description="how entities are found: given (the documents' own "
                                  "'entities'), gazetteer, titles, nlp (from the text alone), spacy (an installed "
                                  "spaCy pipeline)")
    gazetteer: Path | None = Field(None, description="mode gazetteer: entity names, .jsonl of {label, aliases} or "
                                   "one name per line")
    nlp_min_chunks: int = Field(2, ge=1, description="mode nlp: a candidate seen in fewer chunks is no entity")
    nlp_max_share: float = Field(0.5, gt=0, le=1, description="mode nlp: nor one seen in more than this share")
    spacy_model: str = Field("en_core_web_sm", description="mode spacy: an installed spaCy pipeline (name or folder)")
    edge_window: EdgeWindow = Field("chunk", description="two entities co-occur when named in the same chunk, or "
                                    "only in the same paragraph or sentence of it (a title counts in all of them)")
    edge_min_weight: int = Field(1, ge=1, description="pairs that share fewer chunks get no edge")
    edge_top_k: int | None = Field(None, ge=0, description="edge rows kept per entity, strongest first (0: all; "
                                   f"unset: all, or {NLP_TOP_K} in modes nlp and spacy)")
    max_cluster_size: int = Field(10, ge=2, description="a larger community is clustered again inside itself")
    max_levels: int = Field(10, ge=1, description="most hierarchy levels")
    seed: int = Field(42, description="random seed of the community clustering")
    resolution: float = Field(1.0, gt=0, description="clustering resolution: higher makes smaller communities")
    answer_max_chars: int = Field(400, ge=40, description="longest short answer (a longer sentence is cut)")
    report_max_lines: int = Field(12, ge=1, description="members listed in a community report")
    report_evidence: int = Field(3, ge=1, description="chunks kept in a report's evidence_refs")
    max_document_bytes: int = Field(20_000_000, ge=1, description="larger documents are rejected")
    embed_url: str | None = Field(None, description="an OpenAI-compatible embeddings endpoint (e.g. "
                                  "http://127.0.0.1:8080/v1) for entity and chunk vectors; unset: none")
    embed_model: str = Field("", description="the model the endpoint is asked for (part of each vector's hash); "
                             f"without embed_url, '{PACKAGED}' runs the packaged model (extra embed), any other "
                             "makes no vectors")
    llm_url: str | None = Field(None, description="an OpenAI-compatible chat endpoint (e.g. http://127.0.0.1:8080/v1) "
                                "for written reports and answers with verified citations; unset: none (key from "
                                f"${API_KEY_VARIABLE})")
    llm_model: str = Field("", description="the chat model the endpoint is asked for (part of each written row's "
                           "hash)")
    llm_concurrency: int = Field(CONCURRENCY, ge=1, description="most chat calls in flight at once (this run only)")
    llm_max_calls: int | None = Field(None, ge=0, description="most chat calls of a run; the rows left are written "
                                      "by the next (this run only; unset: no limit)")
    llm_max_tokens: int | None = Field(None, ge=0, description="chat tokens (prompt and reply) after which a run "
                                       "starts no call; calls in flight finish (this run only; unset: no limit)")
    llm_timeout: float = Field(TIMEOUT, gt=0, description="seconds one chat call may take before it is sent again "
                               "(this run only)")

    workers: str | None = Field(None, description="build on a Dask cluster, as Prefect tasks: N worker processes on "
                                "this machine, or a Dask scheduler's address (tcp://host:8786); the chunking, word "
                                "counts and candidate names run there (extra dask; this run only)")
    shard_location: str | None = Field(None, description="with workers: the folder or fsspec URL (s3://...) every "
                                       "worker and the run reach, where shards are exchanged (this run only; unset: "
                                       "the run's own folder, for workers on this machine)")
    shard_size: int = Field(SHARD_SIZE, ge=1, description="with workers: documents or chunks a shard holds (this run "
                            "only)")

    @field_validator("embed_url", "llm_url")
    @classmethod
    def _no_credentials(cls, value: str | None, info: Any) -> str | None:
        """An endpoint's URL is stored with the index's settings: a key or password in it would be too."""
        if value is not None and _credentials(value):
            variable = API_KEY_VARIABLE if info.field_name == "llm_url" else EMBED_KEY_VARIABLE
            raise ValueError(f"holds credentials, which the index would store: give the key in ${variable}")
        return value

    @property
    def edge_rows(self) -> int | None:
        """The edge rows kept per entity (None: all), after the mode's default."""
        if self.edge_top_k is None:
            return NLP_TOP_K if self.mentions in ("nlp", "spacy") else None
        return self.edge_top_k or None

    @classmethod
    def of_run(cls, data: dict[str, Any]) -> "Settings":
        """The settings a run stored (index_runs.settings): keys this version does not know are dropped, and
        keys the run did not store take their defaults."""
        return cls(**{k: v for k, v in data.items() if k in cls.model_fields})

    @classmethod
    def from_toml(cls, path: Path, **overrides: Any) -> "Settings":
        """Settings from a TOML file (top-level keys), then explicit overrides."""
        return cls(**given(path, **overrides))


class EdgeSetting(BaseModel):
    """What the stored edges were made with, kept as JSON in index_state (`edges`): the query side computes the
    edges of what some scopes may read with the same."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_weight: int = 1  # pairs that share fewer chunks get no edge
    top_k: int | None = None  # edge rows kept per entity, strongest first (None: all)


class MentionSetting(BaseModel):
    """What the stored mentions were found with, kept as JSON in index_state (`mentions`): the query side reads
    the mode; another mode, extractor or window (`rule`) matches every chunk again, any other change some."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: MentionMode
    extractor: str = ""  # modes nlp and spacy: what found the candidates
    window: EdgeWindow = "chunk"
    version: str = ""  # of how mentions are decided (pipelines.mentions.VERSION)
    candidates: str = ""  # of how candidates are found (pipelines.candidates.VERSION)
    title_tokens: str = ""  # of how titles are tokenised (pipelines.mentions.titles.TITLE_TOKENS)
    gazetteer: str | None = None  # the gazetteer file
    gazetteer_sha256: str = ""  # the digest of its bytes
    nlp_min_chunks: int = 2
    nlp_max_share: float = 0.5
    recheck: bool = False  # the run rejected titles: no run computes this, so the next does not skip

    @property
    def rule(self) -> tuple[str, str, str]:
        """The mode, extractor and window: what each chunk's mentions are computed with."""
        return self.mode, self.extractor, self.window


class Requested(BaseModel):
    """What a run asks for: the settings given (flags, --config) over those the index was built with, and
    whether it may change those (`reconfigure`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    given: dict[str, Any] = {}
    reconfigure: bool = False


def given(config: Path | None, **flags: Any) -> dict[str, Any]:
    """The settings a person gave (as JSON values): the keys of the TOML file `config`, then the flags that are
    set (not None); ValueError names the file of a TOML syntax error, pydantic's ValidationError a bad value."""
    data: dict[str, Any] = {}
    if config is not None:
        try:
            data = tomllib.loads(config.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as err:
            raise ValueError(f"{config}: invalid TOML: {err}") from None
    data |= {k: v for k, v in flags.items() if v is not None}
    return {k: v for k, v in Settings(**data).model_dump(mode="json").items() if k in data}


def explain(err: ValidationError) -> str:
    """A ValidationError of Settings in one line: each bad setting, its value and what it allows."""
    known = ", ".join(Settings.model_fields)
    parts = []
    for e in err.errors(include_url=False):
        name = str(e["loc"][0]) if e["loc"] else "settings"
        if e["type"] == "extra_forbidden":
            parts.append(f"unknown setting {name!r} (settings: {known})")
        else:
            parts.append(f"invalid setting {name} = {_masked(e.get('input'))!r}: {e['msg'][:1].lower()}{e['msg'][1:]}")
    return "; ".join(parts)


def _credentials(url: str) -> bool:
    """Whether `url` holds a user, a password or a query parameter named like a secret (api_key=, token=,
    auth=, Authorization=: SECRET_PARAMETERS)."""
    parts = urlsplit(url)
    # a server may split parameters at ";" as well as "&": ?x=1;auth=... names auth
    names = [name.lower() for name, _ in parse_qsl(parts.query.replace(";", "&"), keep_blank_values=True)]
    return parts.username is not None or parts.password is not None or any(
        secret in name for name in names for secret in SECRET_PARAMETERS)


def _masked(value: Any) -> Any:
    """`value`, a URL holding credentials without its user, password and query: an error message must not
    print a key."""
    if isinstance(value, str) and "://" in value and _credentials(value):
        parts = urlsplit(value)
        return parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1], query="***" if parts.query else "").geturl()
    return value


class DocumentIn(BaseModel):
    """One input document as a JSONL line carries it."""

    model_config = ConfigDict(extra="ignore")

    doc_id: str = Field(min_length=1)
    title: str | None = None
    text: str
    entities: list[str] = []
    scope: str | None = None
    metadata: dict[str, Any] | None = None

    @field_validator("doc_id", mode="before")
    @classmethod
    def _doc_id_as_text(cls, value: Any) -> Any:
        """An integer id is taken as its digits; true and false are no id (to Python a bool is an int)."""
        if isinstance(value, bool):
            raise ValueError("must be a string or an integer, not a boolean")
        return str(value) if isinstance(value, int) else value

    @field_validator("doc_id")
    @classmethod
    def _doc_id_visible(cls, value: str) -> str:
        """An id must show something: one of only white space or zero-width characters names nothing."""
        if blank(value):
            raise ValueError("is blank (only white space or invisible characters)")
        return value

    @field_validator("doc_id")
    @classmethod
    def _doc_id_printable(cls, value: str) -> str:
        """An id with a control character is rejected, as names with one are: a NUL could never be given to
        `acervo delete`, and an escape sequence would reach the terminal."""
        if CONTROL.search(value):
            raise ValueError("contains a control character (NUL included)")
        return value
