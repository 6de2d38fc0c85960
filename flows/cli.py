"""The `acervo` command line (Typer): index a collection, inspect an index.

Exit codes: 0 ok, 1 failure, 2 bad input (an index file of another index format among it, which every verb
refuses in one line, `index` unless --fresh: pipelines.db.OtherFormat), 3 another run holds the index, 4 the
language model could not be reached (--llm-url: the run publishes nothing); a run stopped by SIGINT, SIGTERM or
SIGHUP cleans up and exits 128 + the signal's number (130, 143, 129).
"""

import importlib.util
import inspect
import json
import os
import re
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
import typer.main
from pydantic import ValidationError
from typer.core import TyperCommand

from acervo.flows import flow_run_wanted, startup
from acervo.flows.progress import questions_shown, stage_line, stages_shown
from acervo.flows.signals import stopped, stopping_on_signals
from acervo.pipelines.db import MEMORY_LIMIT, MEMORY_VARIABLE, READER_CACHE_MB
from acervo.pipelines.llm import Unavailable
from acervo.pipelines.publish import IndexBusy, check_target
from acervo.pipelines.query.prune import GRADES, KEEP_TOP, THRESHOLD, WINDOW
from acervo.pipelines.settings import Requested, Settings, given

EXAMPLES = """examples:
  acervo index tests/data/2wiki_sample.jsonl --db acervo.duckdb --mentions titles
  acervo query "Who directed Wrong Turn 3?" --db acervo.duckdb --budget 1024
  acervo stats --db acervo.duckdb

Each verb's --help has its own examples.
"""

VERB_EXAMPLES = {
    "index": """examples:
  acervo index tests/data/2wiki_sample.jsonl --db acervo.duckdb --mentions titles
  acervo index docs/ --db docs.duckdb --mentions gazetteer --gazetteer names.jsonl
  acervo index docs/ --db docs.duckdb --config acervo.toml --json
  acervo index docs/ --db docs.duckdb --fresh --wait 60
  acervo index wiki.jsonl --db wiki.duckdb --mentions titles --workers 4   # a local Dask cluster of 4 processes
  acervo index wiki.jsonl --db wiki.duckdb --workers tcp://scheduler:8786 --shard-location /shared/acervo
  acervo index docs/ --db docs.duckdb --mentions nlp --embed-model multilingual-e5-small   # extra embed
""",
    "delete": """examples:
  acervo delete 2w00005 2w00017 --db acervo.duckdb
  acervo delete notes/old.md --db docs.duckdb --json
""",
    "schedule": """examples:
  PREFECT_API_URL=http://127.0.0.1:4200/api acervo schedule --source docs/ --db docs.duckdb --cron "0 3 * * *"
  PREFECT_API_URL=http://127.0.0.1:4200/api acervo schedule --source wiki.jsonl --db wiki.duckdb --mentions titles
""",
    "serve": """examples:
  acervo serve --db acervo.duckdb --port 8000
  acervo serve --db acervo.duckdb --host 0.0.0.0 --port 8000 --keys keys.json --map map.html
  acervo serve --db acervo.duckdb --readers 8 --timeout 10 --log-questions
""",
    "watch": """examples:
  acervo watch --source docs/ --db docs.duckdb --debounce 10
  acervo watch --source docs/ --db docs.duckdb --max-runs 1 --no-prefect
  PREFECT_API_URL=http://127.0.0.1:4200/api acervo watch --source docs/ --db docs.duckdb --emit
""",
    "query": """examples:
  acervo query "Who directed Wrong Turn 3?" --db acervo.duckdb --budget 1024
  acervo query "What are the main themes?" --db acervo.duckdb --route global --explain
  acervo query "Who directed Wrong Turn 3?" --db acervo.duckdb --budget 300 --explain
  acervo query "What is Project Zeus?" --db acervo.duckdb --scope tenant-a --json
  acervo query "What is Project Zeus?" --db acervo.duckdb --cite ids
  acervo query --questions tests/data/2wiki_sample_questions.jsonl --db acervo.duckdb --json
  acervo query --questions tests/data/2wiki_sample_questions.jsonl --db acervo.duckdb --explain
  acervo query --questions tests/data/2wiki_sample_questions.jsonl --db acervo.duckdb --cache-mb 64 --json
  acervo query "Who directed Wrong Turn 3?" --db acervo.duckdb --prune --llm-url http://127.0.0.1:8080/v1 --explain
  acervo query "What is Project Zeus?" --db acervo.duckdb --prune --llm-url http://127.0.0.1:8080/v1 --llm-timeout 10
""",
    "eval": """examples:
  acervo eval tests/data/2wiki_sample_questions.jsonl --db acervo.duckdb
  acervo eval tests/data/2wiki_sample_questions.jsonl --db acervo.duckdb --limit 50 --json
  acervo eval tests/data/2wiki_sample_questions.jsonl --db acervo.duckdb --plot recall.png
  acervo eval questions.dev.jsonl --db acervo.duckdb --negatives tests/data/offtopic_questions.jsonl --limit 100
""",
    "stats": """examples:
  acervo stats --db acervo.duckdb
  acervo stats --db acervo.duckdb --top 3 --json
""",
    "entities": """examples:
  acervo entities --db docs.duckdb --why Fix MkDocs
  acervo entities --db docs.duckdb --rejected --top 40
  acervo entities --db docs.duckdb --why "note" --json
""",
    "export": """examples:
  acervo export graphml --db acervo.duckdb --out acervo.graphml
  acervo export gexf --db acervo.duckdb --out acervo.gexf --scope tenant-a
  acervo export parquet --db acervo.duckdb --out tables/ --json
  acervo export neo4j --db acervo.duckdb --out neo4j-import/
""",
    "map": """examples:
  acervo map --db acervo.duckdb --out map.html
  acervo map --db acervo.duckdb --out tenant-a.html --scope tenant-a --json
""",
    "mcp": """examples:
  acervo mcp --db acervo.duckdb
  acervo mcp --db docs.duckdb --scope tenant-a --readers 2
""",
    "runs": """examples:
  acervo runs --db acervo.duckdb
  acervo runs --db acervo.duckdb --limit 1 --json
""",
}

OK, FAILED, BAD_INPUT, BUSY, NO_MODEL = 0, 1, 2, 3, 4
GREEDY = {"scopes", "why"}  # options that take every value up to the next option (`--why Fix MkDocs`)
CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0 and C1 control characters and DEL, which a terminal obeys
C1_CONTROLS = re.compile(r"[\x7f-\x9f]")  # what json.dumps(ensure_ascii=False) leaves unescaped
BLOCK_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # the same but for line ends and tabs, which a
                                                                # block of text printed as lines keeps


def _examples(verb: str | None = None) -> str:
    """A help epilog of examples, kept line by line (click's \b marker stops it rewrapping them)."""
    return "\b\n" + (EXAMPLES if verb is None else VERB_EXAMPLES[verb])


app = typer.Typer(name="acervo", help="Offline batch GraphRAG indexing into one DuckDB file.", epilog=_examples(),
                  rich_markup_mode=None, add_completion=False,
                  context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120})


def _opt(*decls: str, help: str, **extra: Any) -> Any:
    """An option whose help says its default itself (Typer's own `[default: ...]` is off)."""
    return typer.Option(*decls, help=help, show_default=False, **extra)


def _arg(help: str, **extra: Any) -> Any:
    """A positional argument with its help."""
    return typer.Argument(help=help, show_default=False, **extra)


def _verb(name: str, summary: str, description: str | None = None) -> Callable[[Callable[..., int]], Any]:
    """Register a verb with its one-line summary, its description and its own examples."""
    return app.command(name, cls=_Verb, short_help=summary,
                       help=description or summary[0].upper() + summary[1:] + ".", epilog=_examples(name))


DbRead = Annotated[Path, _opt("--db", help="the DuckDB index file to read")]
DbWrite = Annotated[Path, _opt("--db", help="the DuckDB index file to write")]
Wait = Annotated[float, _opt("--wait", help="seconds to wait for another run on the same index (default: refuse "
                                         "at once)")]
UsePrefect = Annotated[bool | None, _opt("--prefect/--no-prefect", help="a Prefect flow run, or the same stages "
                                         "without Prefect; default: a flow run only when a Prefect API "
                                         "(PREFECT_API_URL) is set")]
RunJson = Annotated[bool, _opt("--json", help="print the run summary as JSON")]
Hops = Annotated[int, _opt("--hops", help="follow edges up to N steps from the seed entities (default 2; an index "
                                           "of found names, --mentions nlp or spacy, ranks through bridges instead)",
                           min=0)]
Cap = Annotated[int, _opt("--cap", help="follow each entity's N strongest neighbours (default 8; not in an index "
                                        "of found names)", min=1)]
EmbedUrl = Annotated[str | None, _opt("--query-embed-url", help="the OpenAI-compatible embeddings endpoint the "
                                      "index's entity vectors came from (the index's --embed-url); questions that "
                                      "name no entity are then seeded by meaning")]
EmbedModel = Annotated[str, _opt("--query-embed-model", help="the model to ask that endpoint for (the index's "
                                 "--embed-model)")]
VectorFloor = Annotated[float | None, _opt("--vector-floor", help="least cosine for a vector seed (default 0.6)")]


def _setting_option(name: str) -> inspect.Parameter:
    """The option of one Settings field: its type, its description and default as help (none without a
    description: tests/test_cli_help.py fails then); unset, it is not given."""
    field = Settings.model_fields[name]
    default = "" if field.default in (None, "") or not field.description else f" (default {field.default})"
    option = _opt(f"--{name.replace('_', '-')}", help=f"{field.description or ''}{default}")
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                             annotation=Annotated[field.annotation | None, option])


SETTINGS_OPTIONS = [
    inspect.Parameter("config", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        Path | None, _opt("--config", help="TOML file of settings (docs/cli.md); the settings options override it")]),
    inspect.Parameter("reconfigure", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Annotated[
        bool, _opt("--reconfigure", help="allow settings (options or --config) that differ from the index's own, "
                   "and recompute what they change (without it such a run exits 2)")]),
    inspect.Parameter("memory_limit", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        str | None, _opt("--memory-limit", help=f"most memory DuckDB holds in a run, e.g. 512MB or 4GB; past it, "
                         f"it spills to disk beside the index (default: ${MEMORY_VARIABLE}, else {MEMORY_LIMIT})")]),
    *(_setting_option(name) for name in Settings.model_fields),
]


def with_settings(verb: Callable[..., int]) -> Callable[..., int]:
    """`verb` with --config, --reconfigure, --memory-limit and one option per Settings field; it gets them as
    `requested`: the settings given (only those: a run without them keeps the index's own) and whether they may
    change the index's."""

    @wraps(verb)
    def run(**options: Any) -> int:
        config, reconfigure = options.pop("config"), options.pop("reconfigure")
        if memory := options.pop("memory_limit"):
            os.environ[MEMORY_VARIABLE] = memory  # read by every writable connection of the run (pipelines.db)
        flags = {name: options.pop(name) for name in Settings.model_fields}
        return verb(Requested(given=given(config, **flags), reconfigure=reconfigure), **options)

    own = [p for name, p in inspect.signature(verb).parameters.items() if name != "requested"]
    run.__signature__ = inspect.Signature([*own, *SETTINGS_OPTIONS])  # type: ignore[attr-defined]
    return run


class _Verb(TyperCommand):
    """A verb whose GREEDY options take every value up to the next option (argparse's nargs='*'): the value is
    that list, [] when given alone (with --scope: no scope), None when absent. They and their values leave the
    command line here, before click parses the rest, which has no such option."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Take out the GREEDY options with their values, parse the rest, then give those their lists."""
        greedy = {name: param.name for param in self.params if param.name in GREEDY for name in param.opts}
        rest, taken, args = [], {}, list(args)
        while args:
            arg = args.pop(0)
            if arg == "--":  # what follows is positional
                rest += [arg, *args]
                break
            if arg not in greedy:
                rest.append(arg)
                continue
            values = taken.setdefault(greedy[arg], [])
            while args and not args[0].startswith("-"):
                values.append(args.pop(0))
        remaining = super().parse_args(ctx, rest)
        ctx.params.update(taken)
        return remaining


def command() -> Any:
    """The click command Typer makes of `app`; a GREEDY option holds one list, not `multiple` values, which Typer
    would make None when empty."""
    made = typer.main.get_command(app)
    for verb in made.commands.values():
        for param in verb.params:
            if param.name in GREEDY:
                param.multiple = False
    return made


@_verb("index", "index a JSONL file or a folder of .txt/.md files",
       "Build the index of SOURCE into the DuckDB file --db. The file is replaced atomically when the run "
       "completes; readers keep the previous index until then.")
@with_settings
def _index(requested: Requested,
           source: Annotated[Path, _arg("a JSONL file (doc_id, title, text, entities, scope, metadata) or a folder "
                                        "of .txt/.md files", metavar="SOURCE")],
           db: DbWrite,
           allow_rejects: Annotated[bool, _opt("--allow-rejects", help="exit 0 even when some records were "
                                               "rejected")] = False,
           fresh: Annotated[bool, _opt("--fresh", help="rebuild from nothing instead of updating the index (with "
                                       "the index's settings, and the settings options given: no --reconfigure "
                                       "needed)")] = False,
           wait: Wait = 0.0, prefect: UsePrefect = None, as_json: RunJson = False) -> int:
    """`acervo index`: update, publish, report."""
    return _publish(requested, db, source, [], fresh=fresh, wait=wait, prefect=prefect, as_json=as_json,
                    allow_rejects=allow_rejects)


@_verb("delete", "remove documents (and all they contributed) from the index",
       "Remove DOC_IDs from the index and update everything derived from them.")
@with_settings
def _delete(requested: Requested,
            doc_ids: Annotated[list[str], _arg("a document's doc_id (a folder source's: the file's path relative to "
                                               "the folder)", metavar="DOC_ID...")],
            db: Annotated[Path, _opt("--db", help="the DuckDB index file to update")],
            wait: Wait = 0.0, prefect: UsePrefect = None, as_json: RunJson = False) -> int:
    """`acervo delete`: update, publish, report."""
    return _publish(requested, db, None, doc_ids, wait=wait, prefect=prefect, as_json=as_json)


def _publish(requested: Requested, db: Path, source: Path | None, delete: list[str], *, fresh: bool = False,
             wait: float, prefect: bool | None, as_json: bool, allow_rejects: bool = True) -> int:
    """`acervo index` and `acervo delete`: check, update, publish, report; rejected records exit 2 unless
    `allow_rejects`."""
    from acervo.pipelines import stats

    if source is not None and not source.exists():
        print(f"acervo: {source}: no such file or folder", file=sys.stderr)
        return BAD_INPUT
    check_target(db, source, fresh=fresh)
    requested, chosen = _mentions_chosen(db, source, requested)
    settings = _resolved(db, requested, fresh=fresh)
    if settings.mentions == "gazetteer" and (settings.gazetteer is None or not settings.gazetteer.is_file()):
        print("acervo: --mentions gazetteer needs an existing --gazetteer file", file=sys.stderr)
        return BAD_INPUT
    if delete:
        known = _read(db, lambda con: stats.documents_known(con, delete))
        unknown = sorted(set(delete) - set(known))
        if unknown:
            print(_printable(f"acervo: not in the index, nothing to delete: {', '.join(unknown)}"), file=sys.stderr)
        if not known:
            return BAD_INPUT
    if (refused := _cluster_refused(settings.workers, prefect)) is not None:
        print(f"acervo: {refused}", file=sys.stderr)
        return BAD_INPUT
    flow_run = bool(settings.workers) or flow_run_wanted(prefect)
    with stages_shown(quiet=as_json or flow_run) as progress:  # a flow run logs its stages itself
        summary = _run(db, requested, source, delete=delete, fresh=fresh, wait=wait, flow_run=flow_run,
                       progress=progress, workers=settings.workers)
    summary |= _read(db, lambda con: {"db": str(db), "stats": stats.summary(con), "rejected": stats.rejected(con)})
    summary |= {"mentions_chosen": chosen._asdict()} if chosen else {}
    _print_index(summary, as_json=as_json)
    return BAD_INPUT if summary["rejected"] and not allow_rejects else OK


def _cluster_refused(workers: str | None, prefect: bool | None) -> str | None:
    """Why a run cannot go to the Dask cluster `workers` names (None: it can, or there is none)."""
    if workers and prefect is False:
        return "--workers runs the build on Prefect's Dask task runner: drop --no-prefect"
    if workers and importlib.util.find_spec("prefect_dask") is None:
        return "--workers needs Prefect's Dask task runner: pip install 'acervo[dask]'"
    return None


def _mentions_chosen(db: Path, source: Path | None, requested: Requested) -> tuple[Requested, Any]:
    """`requested` with the mentions mode a new index's source calls for when none is given, said on stderr
    (pipelines.reconfigure.mentions_chosen), and what was chosen (None: nothing)."""
    from acervo.pipelines import reconfigure

    requested, chosen = reconfigure.mentions_chosen(source, requested, reconfigure.built_with(db))
    if chosen:
        print(f"acervo: mentions {chosen.mode}: {chosen.why} (--mentions chooses another)", file=sys.stderr)
    return requested, chosen


def _resolved(db: Path, requested: Requested, *, fresh: bool = False) -> Settings:
    """The settings a run on `db` will use; each one it changes is printed, and without --reconfigure (or
    --fresh) a change raises SettingsChanged (exit 2) before anything is written."""
    from acervo.pipelines import reconfigure

    settings, changed = reconfigure.resolve(reconfigure.built_with(db), requested, fresh=fresh)
    for change in changed:
        print(_printable(f"acervo: setting {change.line()}"), file=sys.stderr)
    return settings


def _run(db: Path, settings: Requested, source: Path | None, *, delete: list[str] | None = None,
         fresh: bool = False, wait: float, flow_run: bool,
         progress: Callable[[Any], Any] | None = None, workers: str | None = None) -> dict[str, Any]:
    """One index run into `db`, as a Prefect flow run (on the Dask cluster of `workers`: flows.workers) or calling
    the stages directly; its summary."""
    if not flow_run:
        from acervo.flows.index import publish

        run_id, stages = publish(source, db, settings, delete=delete or (), fresh=fresh, wait=wait,
                                 progress=progress)
        return {"run_id": run_id, "stages": [{**s.row(), "seconds": round(s.seconds, 3)} for s in stages]}
    from acervo.flows.server import prefect_api

    with prefect_api():  # before Prefect's first import, which reads the API URL once
        from acervo.flows.flow_run import on_cluster

        return on_cluster(workers)(source, db, settings, delete=delete, fresh=fresh, wait=wait)


@_verb("schedule", "serve a Prefect deployment: reindex on a cron schedule and on change events (needs "
                   "PREFECT_API_URL)")
@with_settings
def _schedule(requested: Requested,
           source: Annotated[Path, _opt("--source", help="the JSONL file or folder to index (stored as an absolute "
                                        "path)")],
           db: Annotated[Path, _opt("--db", help="the DuckDB index file to write (stored as an absolute path)")],
           cron: Annotated[str, _opt("--cron", help='schedule (default "0 3 * * *": 03:00 every night)')] =
           "0 3 * * *",
           name: Annotated[str, _opt("--name", help="deployment name (default acervo-reindex)")] = "acervo-reindex",
           ) -> int:
    """`acervo schedule`: blocks, serving the deployment; without a Prefect API, whose scheduler and automations
    start its runs, refuses (a temporary server would fire none)."""
    if not flow_run_wanted(None):  # a run is a flow run by default exactly when a Prefect API is configured
        print("acervo: schedule needs a Prefect server: set PREFECT_API_URL (e.g. http://127.0.0.1:4200/api after "
              "`prefect server start`)", file=sys.stderr)
        return BAD_INPUT
    from acervo.flows.schedule import serve

    _resolved(db, requested)
    serve(source, db, requested, cron=cron, name=name)
    return OK


@_verb("serve", "answer assemblers over HTTP/JSON: query, entities, communities (keys bound to scopes)",
       "Serve the index over HTTP/JSON (flows/service.py): POST /query (what query --json prints), GET "
       "/entities/ID, GET /communities/ID, GET /health, GET /openapi.json, GET /map (with --map). Each --keys key "
       "reads only its scopes; without --keys every caller reads everything and the service listens on loopback "
       "only. Readers switch to each index newly published at --db. Stops on SIGINT or SIGTERM. Try: curl -s "
       "localhost:8000/query -H 'content-type: application/json' -d '{\"question\": \"Who directed Wrong Turn "
       "3?\"}'")
def _serve(db: DbRead,
           host: Annotated[str, _opt("--host", help="address to listen on (default 127.0.0.1; another needs "
                                     "--keys)")] = "127.0.0.1",
           port: Annotated[int, _opt("--port", help="port to listen on (default 8000)", min=1, max=65535)] = 8000,
           keys: Annotated[Path | None, _opt("--keys", help='JSON file of keys: {"keys": [{"name", "sha256", '
                                             '"scopes"}]} (pipelines/query/keys.py)')] = None,
           readers: Annotated[int, _opt("--readers", help="questions answered at a time (default 4)", min=1,
                                        max=64)] = 4,
           wait: Annotated[float, _opt("--wait", help="seconds a request waits for a free reader before 503 "
                                       "(default 1)", min=0.0)] = 1.0,
           timeout: Annotated[float, _opt("--timeout", help="seconds a question may take before 504 (default 30)",
                                          min=0.1)] = 30.0,
           map_file: Annotated[Path | None, _opt("--map", help="the community map (acervo map) to serve at "
                                                 "/map")] = None,
           log_questions: Annotated[bool, _opt("--log-questions", help="write each question into the request "
                                               "log (default: never)")] = False) -> int:
    """`acervo serve`."""
    from acervo.flows.service import serve

    serve(db, host=host, port=port, keys_file=keys, readers=readers, wait=wait, timeout=timeout, map_file=map_file,
          log_questions=log_questions)
    return OK


@_verb("mcp", "the query service's tools for agents over stdio (MCP): query, entity, community",
       "Serve the MCP tools query, entity and community over stdin and stdout (flows/agents.py; extra mcp), for an "
       "agent that starts acervo itself; every answer holds only what --scope may read. The same tools are at /mcp "
       "of acervo serve, under each request's key. An MCP client's configuration: {\"mcpServers\": {\"acervo\": "
       "{\"command\": \"acervo\", \"args\": [\"mcp\", \"--db\", \"/srv/acervo.duckdb\"]}}}")
def _mcp(db: DbRead,
         scopes: Annotated[list[str] | None, _opt("--scope", help="scopes the tools may read (default: all)",
                                                  metavar="SCOPE...")] = None,
         readers: Annotated[int, _opt("--readers", help="calls answered at a time (default 2)", min=1,
                                      max=64)] = 2,
         timeout: Annotated[float, _opt("--timeout", help="seconds a call may take (default 30)", min=0.1)] = 30.0,
         ) -> int:
    """`acervo mcp`."""
    from acervo.flows.agents import stdio

    stdio(db, scopes, readers=readers, wait=timeout, timeout=timeout)
    return OK


@_verb("watch", "watch the source and reindex when it changes (no server needed)")
@with_settings
def _watch(requested: Requested,
           source: Annotated[Path, _opt("--source", help="the JSONL file or folder to watch and index")],
           db: DbWrite,
           interval: Annotated[float, _opt("--interval", help="seconds between looks at the source (default 2)")]
           = 2.0,
           debounce: Annotated[float, _opt("--debounce", help="seconds the source must stay still (default 5)")]
           = 5.0,
           max_runs: Annotated[int | None, _opt("--max-runs", help="stop after this many runs (the first run "
                                                "included)")] = None,
           emit: Annotated[bool, _opt("--emit", help="only emit acervo.documents.changed events, for a served "
                                      "deployment to act on")] = False,
           wait: Annotated[float, _opt("--wait", help="seconds to wait for another run on the same index (default "
                                       "60)")] = 60.0,
           prefect: Annotated[bool, _opt("--prefect/--no-prefect", help="each run a Prefect flow run (the default), "
                                         "or with --no-prefect the same stages without the Prefect engine")]
           = True) -> int:
    """`acervo watch`: reindex (or emit an event) whenever the source settles after a change."""
    check_target(db, source)
    workers = _resolved(db, requested).workers
    if (refused := _cluster_refused(workers, prefect)) is not None:
        print(f"acervo: {refused}", file=sys.stderr)
        return BAD_INPUT
    if prefect or emit:
        from acervo.flows.server import started

        started()  # Prefect's API, before Prefect's first import (in flows.schedule), which reads it once
    from acervo.flows.schedule import CHANGED, emit_changed, watch

    first = True

    def on_change(n_files: int) -> None:
        nonlocal first
        what = f"first run over {n_files} file(s)" if first else f"{n_files} file(s) changed"
        first = False
        print(f"acervo watch: {what} under {source}", file=sys.stderr, flush=True)
        if emit:
            emit_changed(source, n_files)
            print(f"acervo watch: emitted {CHANGED} for {source}", file=sys.stderr, flush=True)
            return
        try:
            summary = _run(db, requested, source, wait=wait, flow_run=prefect, workers=workers)
            documents = next(s for s in summary["stages"] if s["stage"] == "documents")
            print(f"acervo watch: run {summary['run_id']} published {db}: {documents['rows_recomputed']} "
                  f"document(s) new or changed, {documents['rows_removed']} removed, "
                  f"{documents['rows_reused']} unchanged", file=sys.stderr, flush=True)
        except Exception as err:  # noqa: BLE001 - a failed run must not stop the watcher
            print(f"acervo watch: run failed: {type(err).__name__}: {err}", file=sys.stderr, flush=True)

    watch(source, on_change=on_change, interval=interval, debounce=debounce, max_runs=max_runs)
    return OK


@_verb("query", "assemble the context of a question (or of a JSONL file of questions)")
def _query(question: Annotated[str | None, _arg("the question (omit with --questions)", metavar="QUESTION")] = None, *,
           db: DbRead,
           questions: Annotated[Path | None, _opt("--questions", help='JSONL of {"id", "question"}: one JSON result '
                                                  "per line (with --explain: one explanation per question)")] = None,
           budget: Annotated[int, _opt("--budget", help="token budget of the context (default 2048)")] = 2048,
           scopes: Annotated[list[str] | None, _opt("--scope", help="scopes the caller may read (default: all)",
                                                    metavar="SCOPE...")] = None,
           hops: Hops = 2, cap: Cap = 8,
           mode: Annotated[Literal["priority", "sliced"], _opt("--mode", help="priority (default): the best blocks "
                           "of any kind first; sliced: each kind gets its share of the budget")] = "priority",
           no_direct: Annotated[bool, _opt("--no-direct", help="never return whole documents")] = False,
           route: Annotated[Literal["local", "global", "mixed"] | None, _opt("--route", help="assemble this route's "
                            "context whatever the router says: local (the question's entities and best chunks), "
                            "global (community reports), mixed (both); the reason names the router's choice")]
           = None,
           cite: Annotated[Literal["labels", "ids"], _opt("--cite", help="labels (default): the text cites each "
                           "chunk as a short label [c1], [c2]... in reading order, which --json's labels map back "
                           "to chunk ids; ids: the text cites the chunk ids themselves")] = "labels",
           as_json: Annotated[bool, _opt("--json", help="print the context as JSON (route, reason, blocks, budget, "
                                         "refused, seeds, labels; with --prune also pruned)")] = False,
           explain: Annotated[bool, _opt("--explain", help="print the route, the seeds, the budget, every block's "
                                         "score and the refused blocks (with --prune: each block's grade and the "
                                         "dropped blocks)")] = False,
           embed_url: EmbedUrl = None, embed_model: EmbedModel = "", vector_floor: VectorFloor = None,
           cache_mb: Annotated[int, _opt("--cache-mb", min=0, metavar="MB", help="megabytes of table blocks the "
                               "reader keeps cached for questions, above the lookup indexes they load (default "
                               f"{READER_CACHE_MB})")] = READER_CACHE_MB,
           prune: Annotated[bool, _opt("--prune", help="let a model (--llm-url) grade every block 0-4 against the "
                                       "question, all blocks together, and drop those the answer does not need: "
                                       "the first --prune-top-k stay, and those graded at least --prune-threshold, "
                                       "each with the blocks it hangs from")] = False,
           prune_top_k: Annotated[int, _opt("--prune-top-k", min=0, metavar="K", help="with --prune: the first K "
                                            "blocks after the instruction stay whatever their grade (default "
                                            f"{KEEP_TOP})")] = KEEP_TOP,
           prune_threshold: Annotated[int, _opt("--prune-threshold", min=GRADES[0], max=GRADES[-1], metavar="G",
                                                help="with --prune: the least grade kept: 4 essential, 3 contributing, "
                                                f"2 supporting, 1 tangential, 0 unrelated (default {THRESHOLD})")]
           = THRESHOLD,
           prune_window: Annotated[int, _opt("--prune-window", min=1, metavar="N", help="with --prune: the tokens one "
                                             "grading call may fill, the model's context window; more blocks are "
                                             f"graded in several calls (default {WINDOW})")] = WINDOW,
           llm_url: Annotated[str | None, _opt("--llm-url", metavar="URL", help="the OpenAI-compatible chat endpoint "
                                               "--prune asks, e.g. http://127.0.0.1:8080/v1 (its key, if any, from "
                                               "$ACERVO_LLM_API_KEY)")] = None,
           llm_model: Annotated[str, _opt("--llm-model", metavar="NAME", help="the model to ask that endpoint for "
                                          "(default: none named, for a server that serves one)")] = "",
           llm_timeout: Annotated[float, _opt("--llm-timeout", metavar="SECONDS", help="with --prune: seconds one "
                                              "grading call may wait for the endpoint before it is sent again, as "
                                              "index's --llm-timeout (default "
                                              f"{Settings.model_fields['llm_timeout'].default:g})")]
           = Settings.model_fields["llm_timeout"].default) -> int:
    """`acervo query`: one question, or a JSONL file of them in one process."""
    if (question is None) == (questions is None):
        print("acervo: give a QUESTION or --questions FILE" + (", not both" if question else ""), file=sys.stderr)
        return BAD_INPUT
    if prune and not llm_url:
        print("acervo: --prune needs a model: give its OpenAI-compatible endpoint with --llm-url (and --llm-model)",
              file=sys.stderr)
        return BAD_INPUT
    knobs = {"budget": budget, "scopes": scopes, "hops": hops, "cap": cap, "mode": mode, "direct": not no_direct,
             "cite": cite, "route": route}
    with _open(db, embed_url, embed_model, vector_floor, cache_mb) as index:
        if prune:
            knobs |= {"prune": _grader(index, llm_url, llm_model, prune_window, llm_timeout), "keep_top": prune_top_k,
                      "threshold": prune_threshold}
        if questions is None:
            _print_context(index.query(question, **knobs), as_json=as_json, explain=explain)
            return OK
        for n, (number, item) in enumerate(_questions(questions)):
            context = index.query(item["question"], **knobs)
            qid = item.get("id", number)
            if explain and not as_json:
                print(f"{chr(10) if n else ''}== {_printable(qid)}: {_printable(item['question'])}")
                _explain(context)
            else:
                print(_escaped_c1(json.dumps({"id": qid, **context.to_dict()}, ensure_ascii=False)), flush=True)
    return OK


def _open(db: Path, embed_url: str | None, embed_model: str, vector_floor: float | None,
          cache_mb: int | None = None) -> Any:
    """The index at `db` for questions, with the embedding endpoint `embed_url` when given, caching `cache_mb` of
    table blocks (None: DuckDB's own limit, as an evaluation's exact BM25 baseline needs whole posting lists)."""
    from acervo.pipelines.embeddings import openai_compatible
    from acervo.pipelines.query.context import Index

    embed = openai_compatible(embed_url, embed_model) if embed_url else None
    return Index(db, embed=embed, vector_floor=vector_floor, cache_mb=cache_mb)


def _grader(index: Any, url: str, model: str, window: int, timeout: float) -> Any:
    """The pruning grader asking the chat endpoint `url` for `model`, each attempt waiting at most `timeout`
    seconds, its calls filling at most `window` tokens as the index counts them."""
    from acervo.pipelines.llm import openai_compatible
    from acervo.pipelines.query.prune import llm_grader

    checked = Settings(llm_timeout=timeout).llm_timeout  # as index's is: above 0, else exit 2 naming the setting
    return llm_grader(openai_compatible(url, model, timeout=checked), window=window, count=index.count)


@_verb("eval", "gold-document recall of the assembled context, beside a BM25 baseline",
       "Gold-document recall of the assembled context, beside a BM25 baseline; route accuracy, empty contexts for "
       "off-topic and for answerable questions, query latency. A question without supporting_doc_ids whose route "
       "is none is off-topic (its context should be empty; one with neither is unlabelled, counted as answerable); "
       "a route global or mixed, or \"scope\": \"global\", makes a global question (it expects that route, either "
       "of the two for the scope, and community reports).")
def _eval(questions: Annotated[Path, _arg("JSONL: question, supporting_doc_ids, optional route (or scope global)",
                                        metavar="QUESTIONS")],
          db: DbRead,
          negatives: Annotated[list[Path] | None, _opt("--negatives", metavar="FILE", help="JSONL of off-topic "
                               "questions evaluated beside QUESTIONS (none may have supporting_doc_ids, a route "
                               "other than none, or scope global); repeatable, e.g. --negatives "
                               "tests/data/offtopic_questions.jsonl")] = None,
          hops: Hops = 2, cap: Cap = 8,
          limit: Annotated[int | None, _opt("--limit", help="evaluate only the first N questions of QUESTIONS "
                                            "(every --negatives question is kept)")] = None,
          plot: Annotated[Path | None, _opt("--plot", help="write a PNG of recall against budget (needs the plot "
                                            "extra: pip install 'acervo[plot]')")] = None,
          as_json: Annotated[bool, _opt("--json", help="print the figures as JSON (no progress shown)")] = False,
          embed_url: EmbedUrl = None, embed_model: EmbedModel = "", vector_floor: VectorFloor = None) -> int:
    """`acervo eval`: recall at k documents and at token budgets, for acervo and the BM25 baseline."""
    from acervo.pipelines.query import evaluate

    if plot and not evaluate.can_plot():
        print("acervo: --plot needs matplotlib: pip install 'acervo[plot]'", file=sys.stderr)
        return BAD_INPUT
    if plot and not plot.parent.is_dir():
        print(f"acervo: --plot {plot}: no such folder {plot.parent}", file=sys.stderr)
        return BAD_INPUT
    asked = [item for _, item in _questions(questions)][:limit]
    asked += [item for path in negatives or [] for item in _negatives(path)]
    with _open(db, embed_url, embed_model, vector_floor) as index, \
            questions_shown(len(asked), quiet=as_json) as progress:
        result = evaluate.run(index, asked, hops=hops, cap=cap, progress=progress)
    if as_json:
        _print_json(result)
    else:
        _print_eval(result)
    if plot:
        sys.stdout.flush()  # the figures are out before the plot is drawn, whatever happens to it
        evaluate.plot(result, str(plot))
    return OK


@_verb("stats", "row counts, communities per level, largest communities")
def _stats(db: DbRead,
           top: Annotated[int, _opt("--top", help="how many of the largest communities to list (default 10)")] = 10,
           as_json: Annotated[bool, _opt("--json", help="print the summary as JSON")] = False) -> int:
    """`acervo stats`."""
    from acervo.pipelines import stats

    summary = _read(db, lambda con: {**stats.summary(con, largest=top), "settings": stats.settings(con)})
    if as_json:
        _print_json(summary)
        return OK
    print(_printable(f"settings: {_shown(summary['settings'])}"))
    for name, n in summary["tables"].items():
        print(f"{name:<20} {n:>10}")
    print("bookkeeping (what reruns compare against):")
    for name, n in summary["bookkeeping"].items():
        print(f"  {name:<18} {n:>10}")
    for level in summary["levels"]:
        print(f"level {level['level']}: {level['communities']} communities "
              f"({level['min_members']}-{level['max_members']} members, mean {level['mean_members']})")
    for c in summary["largest_communities"]:
        print(_printable(f"{c['community_id']}  level {c['level']}  {c['n_members']:>5} members  "
                         f"weight {c['weight']:>6}  {c['title']}"))
    return OK


@_verb("entities", "why candidate names became entities or not (mentions modes nlp and spacy)",
       "Show the decision about each candidate name: kept, or rejected as rare, too frequent, or a common word "
       "capitalised by its place (sentence start, heading, list item), with the counts it was decided on.")
def _entities(db: DbRead,
              why: Annotated[list[str] | None, _opt("--why", metavar="NAME...", help="the names to explain, however "
                                                    "cased (default: the candidates seen in most chunks)")] = None,
              top: Annotated[int, _opt("--top", help="without --why: how many candidates to list, those seen in "
                                       "most chunks first (default 20)")] = 20,
              rejected: Annotated[bool, _opt("--rejected", help="without --why: list only candidates that did not "
                                             "become entities")] = False,
              as_json: Annotated[bool, _opt("--json", help="print the decisions as JSON (entity_id, name, kept, "
                                            "reason, canonical, counts, lowercase, why)")] = False) -> int:
    """`acervo entities`."""
    from acervo.pipelines import stats

    found = _read(db, lambda con: stats.decisions(con, why, top=top, rejected=rejected))
    if as_json:
        _print_json(found)
        return OK
    for d in found:
        verdict = "entity" if d["kept"] else "no entity"
        print(_printable(f"{d['name']} ({verdict}, in {d['n_chunks']} chunks): {d['why']}"))
    return OK


@_verb("export", "the graph and tables as files other tools read: GraphML, GEXF, Parquet, Neo4j import CSVs",
       "Write a published index as GraphML or GEXF (the entity graph, for Gephi, networkx, igraph), Parquet (every "
       "table of the schema) or Neo4j import CSVs (entities, communities, chunks, documents and their relations), "
       "with only what --scope may read. The export is made beside --out and renamed into place; a folder is "
       "replaced only when it holds an earlier export.")
def _export(kind: Annotated[Literal["graphml", "gexf", "parquet", "neo4j"],
                            _arg("graphml or gexf (a file), parquet or neo4j (a folder)", metavar="FORMAT")],
            db: DbRead,
            out: Annotated[Path, _opt("--out", help="the file (graphml, gexf) or folder (parquet, neo4j) to write")],
            scopes: Annotated[list[str] | None, _opt("--scope", help="scopes the export may read (default: all)",
                                                     metavar="SCOPE...")] = None,
            as_json: Annotated[bool, _opt("--json", help="print the summary as JSON (format, path, scopes, "
                                          "entities, edges, communities, files: rows per file)")] = False) -> int:
    """`acervo export`."""
    from acervo.pipelines.export.output import export

    summary = export(db, kind, out, scopes)
    if as_json:
        _print_json(summary)
        return OK
    print(_printable(f"exported {summary['format']} to {summary['path']}: {summary['entities']} entities, "
                     f"{summary['edges']} edges, {summary['communities']} communities"))
    for name, n in summary.get("files", {}).items():
        print(_printable(f"  {name:<28} {n:>10} rows"))
    return OK


@_verb("map", "the communities as one HTML page that opens offline in any browser",
       "Write one self-contained HTML file (no network when viewed): the top-level communities coloured and laid out "
       "beforehand (igraph), each opening to its sub-communities or members and to its report, every line with its "
       "cited chunk's text and document; search by entity name; a table of the communities. Only what --scope may "
       "read is in it.")
def _map(db: DbRead,
         out: Annotated[Path, _opt("--out", help="the HTML file to write")],
         scopes: Annotated[list[str] | None, _opt("--scope", help="scopes the map may show (default: all)",
                                                  metavar="SCOPE...")] = None,
         as_json: Annotated[bool, _opt("--json", help="print the summary as JSON (path, entities, edges, "
                                       "communities, shown: those the overview draws)")] = False) -> int:
    """`acervo map`."""
    from acervo.pipelines.export.output import export

    summary = export(db, "map", out, scopes)
    if as_json:
        _print_json(summary)
        return OK
    print(_printable(f"map of {summary['communities']} communities ({summary['shown']} drawn in the overview, "
                     f"{summary['entities']} entities) written to {summary['path']}"))
    return OK


@_verb("runs", "the ledger of index runs: per stage rows in/out and seconds")
def _runs(db: DbRead,
          limit: Annotated[int, _opt("--limit", help="how many of the latest runs to list (default 20)")] = 20,
          as_json: Annotated[bool, _opt("--json", help="print the runs as JSON (stage fields as in index "
                                        "--json)")] = False) -> int:
    """`acervo runs`."""
    from acervo.pipelines import runs

    history = _read(db, lambda con: runs.history(con, limit=limit))
    if as_json:
        _print_json(history)
        return OK
    for run in history:
        print(_printable(f"{run['run_id']}  {run['status']}  {run['started_at']} -> {run['finished_at']}  "
                         f"rejected {run['n_rejected']}  {run['source']}"))
        print(_printable(f"    settings: {_shown(run['settings'])}"))
        for s in run["stages"]:
            print(_printable(f"    {stage_line(s)}"))
    return OK


def _questions(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) of each non-blank line of a JSONL file of questions; ValueError names a bad line."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{number}: invalid JSON: {err.msg}") from err
        if not isinstance(item, dict) or not isinstance(item.get("question"), str):
            raise ValueError(f"{path}:{number}: no 'question'")
        found.append((number, item))
    return found


def _print_index(summary: dict[str, Any], *, as_json: bool) -> None:
    """The run summary, for a person or as JSON."""
    if as_json:
        _print_json(summary)
        return
    tables = summary["stats"]["tables"]
    print(_printable(f"indexed into {summary['db']} (run {summary['run_id']})"))
    print("  " + "  ".join(f"{k} {v}" for k, v in tables.items() if k not in ("index_runs", "run_stages")))
    for level in summary["stats"]["levels"]:
        print(f"  level {level['level']}: {level['communities']} communities, "
              f"{level['min_members']}-{level['max_members']} members")
    if written := _written(summary["stages"]):
        print("  language model: " + written)
    for r in summary["rejected"][:20]:
        print(_printable(f"rejected {r['source']}:{r['line']}: {r['reason']}: {r['detail']}"), file=sys.stderr)
    if len(summary["rejected"]) > 20:
        print(f"... and {len(summary['rejected']) - 20} more (table `rejected`)", file=sys.stderr)
    print(_printable(f"next: acervo query \"QUESTION\" --db {summary['db']}  (or acervo serve --db {summary['db']})"))


def _written(stages: list[dict[str, Any]]) -> str:
    """What the written stages' calls came to, for a person ("" when no model was called in the run)."""
    counts = [s["detail"] for s in stages if s["stage"].startswith("written_") and s["detail"]
              and "calls" in s["detail"]]
    if not counts:
        return ""
    total = {k: sum(c[k] for c in counts) for k in ("calls", "written", "rejected", "over_budget", "failed")}
    left = total["over_budget"] + total["failed"]
    later = (f", {left} left for the next run ({total['over_budget']} over budget, {total['failed']} failed)"
             if left else "")
    return f"{total['calls']} calls, {total['written']} rows written, {total['rejected']} kept extractive{later}"


def _print_context(context: Any, *, as_json: bool, explain: bool) -> None:
    """A context as JSON, as an explanation, or as the text to put in a prompt; a failed pruning said on stderr."""
    if context.pruned and context.pruned["error"]:
        print(_printable(f"acervo: pruning failed: {context.pruned['error']}"), file=sys.stderr)
    if as_json:
        print(_escaped_c1(context.to_json()))
    elif explain:
        _explain(context)
    else:
        print(_printable(context.text, block=True) if context.blocks else _printable(f"(no context) {context.reason}"))


def _explain(context: Any) -> None:
    """How a context was assembled: route, seeds, budget, each block's score, and the blocks left out."""
    b = context.budget
    print(_printable(f"route {context.route}: {context.reason}"))
    if context.seeds:  # budget's "components": the seeds whose short answer the context holds
        print(_printable(f"seeds: {', '.join(context.seeds)} ({b['components']} of {len(context.seeds)} with their "
                         "answer in the context)"))
    print(f"budget {b['spent']}/{b['total']} tokens, truncation {b['truncation_rate']:.2%}, by kind {b['by_kind']}")
    pruned = context.pruned
    kept = pruned["kept"] if pruned else [None] * len(context.blocks)
    for block, grade in zip(context.blocks, kept, strict=True):
        graded = "" if grade is None or grade["grade"] is None else f"  grade {grade['grade']} ({grade['reason']})"
        print(_printable(f"  {block.kind:<12} score {block.score:<8} {block.tokens:>5} tokens  refs {block.refs}"
                         f"{graded}"))
    refused: dict[str, list[str]] = {}
    for kind, key in context.refused:
        refused.setdefault(kind, []).append(key)
    for kind, keys in refused.items():
        print(_printable(f"  refused {len(keys)} {kind}: {', '.join(keys)}"))
    if context.labels:
        print(_printable(f"labels: {', '.join(f'{name} = {ref}' for name, ref in context.labels.items())}"))
    if pruned:
        _explain_pruned(pruned)


def _explain_pruned(pruned: dict[str, Any]) -> None:
    """What pruning dropped, each block with its grade and why, and what it cost."""
    print(f"pruned {pruned['blocks_before'] - pruned['blocks_after']} of {pruned['blocks_before']} blocks, "
          f"{pruned['tokens_before']} -> {pruned['tokens_after']} tokens (keep top {pruned['keep_top']}, threshold "
          f"{pruned['threshold']}; {pruned['calls']} model calls, {pruned['model_tokens_in']} tokens in, "
          f"{pruned['model_tokens_out']} out)")
    if pruned["error"]:
        print(_printable(f"  pruning failed: {pruned['error']}"))
    for d in pruned["dropped"]:
        print(_printable(f"  dropped {d['kind']:<12} grade {d['grade']} {d['tokens']:>5} tokens  refs {d['refs']}: "
                         f"{d['reason']}"))


def _negatives(path: Path) -> list[dict[str, Any]]:
    """The off-topic questions of a --negatives file; ValueError names a line with gold documents or a route."""
    found = []
    for number, item in _questions(path):
        if item.get("supporting_doc_ids") or item.get("route") not in (None, "none") or item.get("scope") == "global":
            raise ValueError(f"{path}:{number}: a --negatives question must have no supporting_doc_ids, "
                             "no route but none, no scope global")
        found.append({**item, "route": "none"})
    return found


EVAL_ROWS = [("recall@2", "recall@2"), ("recall@5", "recall@5"), ("recall@10", "recall@10"),
             ("ceiling@2", "ceiling of recall@2"), ("recall@2_of_ceiling", "recall@2 / ceiling"),
             ("ceiling@5", "ceiling of recall@5"), ("recall@5_of_ceiling", "recall@5 / ceiling"),
             ("ceiling@10", "ceiling of recall@10"), ("recall@10_of_ceiling", "recall@10 / ceiling"),
             ("recall@512t", "recall@512t"), ("recall@1024t", "recall@1024t"), ("recall@2048t", "recall@2048t"),
             ("recall@4096t", "recall@4096t"), ("route_accuracy", "route accuracy"),
             ("negative_empty_rate", "off-topic empty"), ("answerable_empty_rate", "answerable empty"),
             ("global_route_rate", "global routed as expected"), ("global_report_rate", "global with reports"),
             ("citations_resolved_rate", "citations resolved"),
             ("latency_ms_p50", "latency p50 ms"), ("latency_ms_p95", "latency p95 ms"),
             ("tokens_used", "tokens used"), ("truncation_rate", "truncation rate")]


def _print_eval(result: dict[str, Any]) -> None:
    """The evaluation as tables (acervo beside the baseline, then per route), then why a figure is missing
    ('-'), one line per figure, starting with its JSON key."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from acervo.pipelines.query.evaluate import unmeasured

    ours, theirs = result["acervo"], result["baseline"]
    console = Console(file=sys.stdout, highlight=False)
    print(f"{ours['questions']} questions: {ours['questions_with_gold']} with gold documents, "
          f"{ours['questions_off_topic']} off-topic, {ours['questions_global']} global")
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("figure (%, unless named)")
    table.add_column("acervo", justify="right")
    table.add_column("BM25", justify="right")
    table.add_column("JSON key")
    for key, label in EVAL_ROWS:
        table.add_row(label, _cell(ours[key]), _cell(theirs[key]), key)
    console.print(table)
    least = result["margin_over_baseline"]
    if least["min"] is not None:
        print(f"least acervo - BM25 over every k and budget: {least['min']} (at {least['at']})")
    routes = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for name in ("route", "questions", "with gold", "off-topic", "global", "recall@5", "latency p50 ms"):
        routes.add_column(name, justify="left" if name == "route" else "right")
    for route, summary in result["per_route"].items():
        routes.add_row(_cell(route), *(str(summary[f"questions{part}"])
                                       for part in ("", "_with_gold", "_off_topic", "_global")),
                       _cell(summary["recall@5"]), _cell(summary["latency_ms_p50"]))
    console.print(routes)
    for key, _ in EVAL_ROWS:
        why = dict.fromkeys(unmeasured(name, key) for name in ("acervo", "baseline") if result[name][key] is None)
        if why:
            print(_printable(f"{key} '-': {'; '.join(why)}"))


def _cell(value: Any) -> str:
    """A table cell: '-' for a missing figure, control characters escaped."""
    return "-" if value is None else _printable(value)


def _read(db: Path, fn: Callable[[Any], Any]) -> Any:
    """`fn` applied to a read-only connection to the index `db`."""
    from acervo.pipelines.db import reading

    with reading(db) as con:
        return fn(con)


def _printable(text: Any, *, block: bool = False) -> str:
    """`text` (from the index or the file system) as a terminal may show it: each control character escaped as
    Python writes it (\\x1b, \\n), so that one line stays one; in a `block` of lines, line ends and tabs kept."""
    return (BLOCK_CONTROLS if block else CONTROLS).sub(lambda found: repr(found.group())[1:-1], str(text))


def _escaped_c1(text: str) -> str:
    """JSON text with DEL and the C1 control characters, which json leaves as they are, written as escapes."""
    return C1_CONTROLS.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def _print_json(value: Any) -> None:
    """`value` as indented JSON on standard output (json escapes every C0 control character)."""
    print(_escaped_c1(json.dumps(value, ensure_ascii=False, default=str, indent=2)))


def _shown(settings: dict[str, Any] | None) -> str:
    """An index's settings for a person: those that differ from the defaults, as key=value."""
    from acervo.pipelines.settings import Settings

    if settings is None:
        return "none (no run yet)"
    defaults = Settings().model_dump(mode="json")
    changed = [f"{k}={v}" for k, v in settings.items() if defaults.get(k, v) != v or k not in defaults]
    return " ".join(changed) + " (others default)" if changed else "all default"



def main(argv: list[str] | None = None) -> int:
    """Run one verb; return its exit code. --help exits 0 and a malformed command line 2, by SystemExit."""
    startup()
    made = command()
    try:
        with stopping_on_signals(), made.make_context("acervo", sys.argv[1:] if argv is None else list(argv)) as ctx:
            return made.invoke(ctx)
    except typer.Exit as done:  # --help, once printed
        raise SystemExit(done.exit_code) from None
    except typer.TyperException as err:  # a malformed command line (typer's public base of its usage errors)
        err.show()  # its usage and what is wrong
        raise SystemExit(err.exit_code) from None
    except KeyboardInterrupt as stop:
        return stopped(stop)
    except BrokenPipeError:  # the reader (head, less) went away: not an error of ours
        sys.stderr.close()
        return OK
    except IndexBusy as err:
        print(_printable(f"acervo: {err}"), file=sys.stderr)
        return BUSY
    except Unavailable as err:
        print(_printable(f"acervo: the language model could not be reached or refuses every request: {err}"),
              file=sys.stderr)
        return NO_MODEL
    except ValidationError as err:
        from acervo.pipelines.settings import explain

        print(f"acervo: {explain(err)}", file=sys.stderr)
        return BAD_INPUT
    except (FileNotFoundError, PermissionError, ValueError) as err:
        print(_printable(f"acervo: {err}"), file=sys.stderr)
        return BAD_INPUT
    except Exception as err:  # noqa: BLE001 - the CLI's last word: say what failed, exit 1
        print(_printable(f"acervo: {type(err).__name__}: {err}"), file=sys.stderr)
        return FAILED


if __name__ == "__main__":
    sys.exit(main())
