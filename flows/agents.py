"""The query service's door for agents: an MCP server (the official `mcp` SDK, extra `mcp`) with three tools, the
same reads as the HTTP door, over stdio (`acervo mcp`: the scopes the operator gives on its command line) or over
HTTP at /mcp of `acervo serve` (the scopes of the request's key, as every HTTP request's)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from acervo.pipelines.query import lookup
from acervo.pipelines.query.keys import Caller, Keys
from acervo.pipelines.query.readers import Busy, Readers, TooSlow
from acervo.pipelines.query.readers import answered as bounded

INSTRUCTIONS = ("Answers questions about one indexed collection of documents. Call `query` first with the user's "
                "question: it returns the context to answer from, blocks of text whose claims cite chunk labels "
                "such as [c1]. Call `entity` or `community` to read more about an id a context or another read "
                "names. Answer only from what these tools return, citing the labels.")


class Refused(Exception):
    """A call the server will not make: no key, an unknown one, every reader busy, or a question over its time."""


def server(readers: Readers, caller_of: Callable[[Any], Caller], *, wait: float, timeout: float) -> Any:
    """The MCP server over `readers`; `caller_of(context)` names who a call comes from and what it may read."""
    try:
        from mcp.server.mcpserver import Context, MCPServer
    except ImportError:
        raise ValueError("the MCP door needs the mcp package: pip install 'acervo[mcp]'") from None

    agents = MCPServer("acervo", instructions=INSTRUCTIONS)

    async def answered(ask: Callable[[Any], Any]) -> Any:
        """`ask` on a free reader, within the service's bounds (readers.answered)."""
        try:
            return await bounded(readers, ask, wait=wait, timeout=timeout)
        except Busy:
            raise Refused("every reader is busy: try again") from None
        except TooSlow as err:
            raise Refused(str(err)) from None

    @agents.tool(description="Assemble the context that answers a question about the indexed documents, within a "
                             "token budget: the route taken and why, and blocks of text (chunks, short answers, "
                             "relations, community reports) whose claims cite chunk labels like [c1]; `labels` maps "
                             "each label to its chunk id. Call it first for any question about the collection. "
                             "`route` forces local (named entities and their evidence), global (community reports "
                             "about the whole collection) or mixed.")
    async def query(question: str, context: Context, budget: int = 2048,
                    route: Literal["local", "global", "mixed"] | None = None) -> dict[str, Any]:
        who = caller_of(context)
        return await answered(lambda index: index.query(question, budget=budget, scopes=who.scopes,
                                                        route=route).to_dict())

    @agents.tool(description="Read one entity of the index by its id (from a context's `seeds`, or an entity's "
                             "neighbours): its label, a one-sentence answer about it with the chunk it quotes, its "
                             "best evidence chunks and its strongest neighbours. Returns null for an unknown id.")
    async def entity(entity_id: str, context: Context) -> dict[str, Any] | None:
        who = caller_of(context)
        return await answered(lambda index: lookup.entity(index, entity_id, who.scopes))

    @agents.tool(description="Read one community (a group of entities that appear together) by its id: its title, "
                             "members, sub-communities, and its report, each line a member's short answer with the "
                             "chunk it cites. Returns null for an unknown id.")
    async def community(community_id: str, context: Context) -> dict[str, Any] | None:
        who = caller_of(context)
        return await answered(lambda index: lookup.community(index, community_id, who.scopes))

    return agents


def by_key(keys: Keys | None) -> Callable[[Any], Caller]:
    """Who an HTTP call comes from: the caller its Authorization header's key names (anyone, without keys)."""
    def caller_of(context: Any) -> Caller:
        if keys is None:
            return Caller("anyone", None)
        found = keys.bearer((context.headers or {}).get("authorization", ""))
        if found is None:
            raise Refused("give a key the service knows: Authorization: Bearer KEY")
        return found
    return caller_of


def stdio(db: Path, scopes: list[str] | None, *, readers: int, wait: float, timeout: float) -> None:
    """Serve the MCP tools over stdin and stdout until the client closes them, reading as `scopes` may."""
    pool = Readers(db, readers)
    try:
        server(pool, lambda _: Caller("stdio", scopes), wait=wait, timeout=timeout).run("stdio")
    finally:
        pool.close()
