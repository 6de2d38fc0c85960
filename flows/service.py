"""The query service: HTTP/JSON over the published index for assemblers (FastAPI on uvicorn), every answer built
inside the scopes of the caller's key, readers switched to each newly published file, bounded in concurrency
and time.

    POST /query               {"question" | "questions", budget, route, cite, mode, hops, cap, direct}: what
                              `acervo query --json` prints (a list for "questions")
    GET  /entities/{id}       short answer, evidence chunks, neighbours
    GET  /communities/{id}    members, sub-communities, report lines with the chunks they cite
    GET  /health              ok, and the index file's run
    GET  /openapi.json        the OpenAPI description of all of them
    GET  /map                 the community map (acervo map), when the service was given one
    POST /mcp                 the MCP door (streamable HTTP): tools query, entity, community (flows/agents.py)

Statuses: 400/422 bad input, 401 no or unknown key, 404 no such entity or community (or none the key may see),
503 every reader busy (Retry-After), 504 a question over its time (stopped in DuckDB).
"""

import ipaddress
import json
import logging
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

import duckdb
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response
from fastapi.responses import FileResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from acervo.pipelines.query import lookup
from acervo.pipelines.query.context import MAX_BUDGET
from acervo.pipelines.query.keys import Caller, Keys
from acervo.pipelines.query.readers import Busy, Readers, TooSlow, answered

MAX_QUESTION = 4000  # characters of one question
MAX_QUESTIONS = 100  # questions in one request
LOG = logging.getLogger("acervo.service")


class QueryIn(BaseModel):
    """A request to /query: one question or several, and how to assemble each context."""

    model_config = ConfigDict(extra="forbid")
    question: str | None = Field(None, min_length=1, max_length=MAX_QUESTION)
    questions: list[Annotated[str, Field(min_length=1, max_length=MAX_QUESTION)]] | None = Field(
        None, min_length=1, max_length=MAX_QUESTIONS)
    budget: int = Field(2048, ge=1, le=MAX_BUDGET, description="token budget of each context")
    route: Literal["local", "global", "mixed"] | None = Field(None, description="the route, whatever the router says")
    cite: Literal["labels", "ids"] = "labels"
    mode: Literal["priority", "sliced"] = "priority"
    hops: int = Field(2, ge=0, le=4)
    cap: int = Field(8, ge=1, le=100)
    direct: bool = Field(True, description="whole documents when they fit the budget")

    @model_validator(mode="after")
    def _one_of(self) -> "QueryIn":
        if (self.question is None) == (self.questions is None):
            raise ValueError("give a question or questions, not both")
        return self


class Bounds:
    """What every request shares: the readers, the keys, and the bounds of waiting and of a question's time."""

    def __init__(self, pool: Readers, keys: Keys | None, *, wait: float, timeout: float, log_questions: bool) -> None:
        self.pool, self.keys, self.wait, self.timeout, self.log_questions = pool, keys, wait, timeout, log_questions

    async def answered(self, ask: Callable[[Any], Any]) -> Any:
        """`ask` on a free reader (readers.answered): 503 when none is free within the wait, 504 when it takes
        longer than the timeout, 400 for what the query refuses."""
        try:
            return await answered(self.pool, ask, wait=self.wait, timeout=self.timeout)
        except Busy:
            raise HTTPException(503, "every reader is busy: try again", headers={"Retry-After": "1"}) from None
        except TooSlow as err:
            raise HTTPException(504, str(err)) from None
        except ValueError as err:
            raise HTTPException(400, str(err)) from None


def caller(request: Request) -> Caller:
    """The caller a request's key names (401 for none or an unknown one); without keys, anyone reads everything."""
    keys = request.app.state.bounds.keys
    if keys is None:
        return Caller("anyone", None)
    found = keys.bearer(request.headers.get("authorization", ""))
    if found is None:
        raise HTTPException(401, "give a key the service knows: Authorization: Bearer KEY",
                            headers={"WWW-Authenticate": "Bearer"})
    request.state.caller = found.name
    return found


Who = Annotated[Caller, Depends(caller)]
routes = APIRouter()


@routes.get("/health")
def health(request: Request) -> dict[str, Any]:
    """Whether the service answers, and which index file it reads."""
    return {"status": "ok", "index": request.app.state.bounds.pool.db.name}


@routes.post("/query")
async def query(body: QueryIn, request: Request, who: Who) -> Any:
    """The context of each question, as `acervo query --json` prints it (a list for `questions`)."""
    asked = body.questions or [body.question]
    request.state.question = asked if body.questions else body.question
    knobs = {"budget": body.budget, "scopes": who.scopes, "route": body.route, "cite": body.cite,
             "mode": body.mode, "hops": body.hops, "cap": body.cap, "direct": body.direct}
    found = await request.app.state.bounds.answered(lambda index: [index.query(q, **knobs).to_dict() for q in asked])
    return found if body.questions else found[0]


@routes.get("/entities/{entity_id:path}")
async def entity(entity_id: str, request: Request, who: Who) -> Any:
    """An entity's short answer, evidence chunks and neighbours."""
    return _found(await request.app.state.bounds.answered(lambda index: lookup.entity(index, entity_id, who.scopes)),
                  "entity")


@routes.get("/communities/{community_id}")
async def community(community_id: str, request: Request, who: Who) -> Any:
    """A community's members, sub-communities and report, each line with the chunk it cites."""
    bounds = request.app.state.bounds
    return _found(await bounds.answered(lambda index: lookup.community(index, community_id, who.scopes)), "community")


def _found(value: Any, what: str) -> Any:
    """`value`, or 404 when there is none."""
    if value is None:
        raise HTTPException(404, f"no such {what}, or none this key may read")
    return value


async def logged(bounds: Bounds, request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """One JSON line per request on stderr: method, path, status, milliseconds, key name (the question only when
    the service was started with --log-questions)."""
    started = time.perf_counter()
    response = await call_next(request)
    line = {"method": request.method, "path": request.url.path, "status": response.status_code,
            "ms": round(1000 * (time.perf_counter() - started), 1), "key": getattr(request.state, "caller", None)}
    if bounds.log_questions:
        line["question"] = getattr(request.state, "question", None)
    LOG.info(json.dumps(line, ensure_ascii=False))
    return response


async def failed(request: Request, err: duckdb.Error) -> JSONResponse:
    """A DuckDB error: 500 naming its kind, never its text (which may quote the index)."""
    return JSONResponse({"detail": f"the index could not answer: {type(err).__name__}"}, status_code=500)


def app(db: Path, keys: Keys | None, *, readers: int = 4, wait: float = 1.0, timeout: float = 30.0,
        map_file: Path | None = None, log_questions: bool = False, host: str = "127.0.0.1") -> FastAPI:
    """The service over the index `db`: `readers` questions at a time, a request waiting at most `wait` s for one
    (then 503), each question stopped after `timeout` s (504); the MCP door at /mcp when the mcp package is
    installed. Without `keys`, every caller reads everything (the command line then serves loopback only)."""
    pool = Readers(db, readers)
    door = _agents(pool, keys, wait=wait, timeout=timeout, host=host)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if door is None:
            yield
        else:
            async with door.session_manager.run():
                yield
        pool.close()

    service = FastAPI(title="acervo", version="1", docs_url=None, redoc_url=None, lifespan=lifespan,
                      description="Query a published acervo index; every answer holds only what the key may read.")
    service.state.bounds = Bounds(pool, keys, wait=wait, timeout=timeout, log_questions=log_questions)
    service.include_router(routes)
    service.middleware("http")(partial(logged, service.state.bounds))
    service.add_exception_handler(duckdb.Error, failed)
    if map_file is not None:
        service.add_api_route("/map", lambda: FileResponse(map_file, media_type="text/html"),
                              methods=["GET"], include_in_schema=False, dependencies=[Depends(caller)])
    if door is not None:  # last: it answers /mcp, and 404 to any path no route above took
        service.mount("/", door.streamable_http_app(streamable_http_path="/mcp", stateless_http=True,
                                                    json_response=True, host=host,
                                                    transport_security=_security(keys)))
    return service


def _agents(pool: Readers, keys: Keys | None, *, wait: float, timeout: float, host: str) -> Any:
    """The MCP door over the service's readers (flows.agents), or None without the mcp package."""
    from acervo.flows import agents

    try:
        return agents.server(pool, agents.by_key(keys), wait=wait, timeout=timeout)
    except ValueError:
        return None


def _security(keys: Keys | None) -> Any:
    """The MCP door's transport security: DNS-rebinding protection (the SDK's own, for loopback) without keys;
    with keys, each call's key is what protects it, whatever the Host it names."""
    if keys is None:
        return None
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


def loopback(host: str) -> bool:
    """Whether `host` is a loopback address (or localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(db: Path, *, host: str, port: int, keys_file: Path | None, readers: int, wait: float, timeout: float,
          map_file: Path | None, log_questions: bool) -> None:
    """Run the service until SIGINT or SIGTERM (uvicorn's own shutdown: requests in flight finish)."""
    import uvicorn

    keys = Keys(keys_file) if keys_file is not None else None
    if keys is None and not loopback(host):
        raise ValueError(f"no --keys: the service answers every caller with everything, so it listens on loopback "
                         f"only, not on {host}")
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    if keys is None:
        print(f"acervo serve: no keys given: every caller reads every document; listening on {host} only",
              file=sys.stderr, flush=True)
    served = app(db, keys, readers=readers, wait=wait, timeout=timeout, map_file=map_file,
                 log_questions=log_questions, host=host)
    if not any(getattr(route, "path", None) == "" for route in served.routes):  # the MCP door's mount
        print("acervo serve: no MCP door at /mcp: it needs the mcp package (pip install 'acervo[mcp]')",
              file=sys.stderr, flush=True)
    uvicorn.run(served, host=host, port=port, log_level="warning", workers=1)
