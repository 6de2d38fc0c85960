"""The `acervo` command line: index a collection, inspect an index.

Exit codes: 0 ok, 1 failure, 2 bad input, 3 another run holds the index; a run stopped by SIGINT, SIGTERM
or SIGHUP cleans up and exits 128 + the signal's number (130, 143, 129).
"""

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from flows.signals import stopped, stopping_on_signals
from pipelines.publish import IndexBusy, check_target

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
""",
    "delete": """examples:
  acervo delete 2w00005 2w00017 --db acervo.duckdb
  acervo delete notes/old.md --db docs.duckdb --json
""",
    "serve": """examples:
  PREFECT_API_URL=http://127.0.0.1:4200/api acervo serve --source docs/ --db docs.duckdb --cron "0 3 * * *"
  PREFECT_API_URL=http://127.0.0.1:4200/api acervo serve --source wiki.jsonl --db wiki.duckdb --mentions titles
""",
    "watch": """examples:
  acervo watch --source docs/ --db docs.duckdb --debounce 10
  acervo watch --source docs/ --db docs.duckdb --max-runs 1 --no-prefect
  PREFECT_API_URL=http://127.0.0.1:4200/api acervo watch --source docs/ --db docs.duckdb --emit
""",
    "query": """examples:
  acervo query "Who directed Wrong Turn 3?" --db acervo.duckdb --budget 1024
  acervo query "Who directed Wrong Turn 3?" --db acervo.duckdb --budget 300 --explain
  acervo query "What is Project Zeus?" --db acervo.duckdb --scope tenant-a --json
  acervo query --questions tests/data/2wiki_sample_questions.jsonl --db acervo.duckdb --json
  acervo query --questions tests/data/2wiki_sample_questions.jsonl --db acervo.duckdb --explain
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
    "runs": """examples:
  acervo runs --db acervo.duckdb
  acervo runs --db acervo.duckdb --limit 1 --json
""",
}

OK, FAILED, BAD_INPUT, BUSY = 0, 1, 2, 3


def _parser() -> argparse.ArgumentParser:
    """The argument parser, one sub-command per verb."""
    parser = argparse.ArgumentParser(prog="acervo", description="Offline batch GraphRAG indexing into one DuckDB file.",
                                     epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    def verb(name: str, summary: str, description: str | None = None) -> argparse.ArgumentParser:
        """A sub-command with its own examples."""
        return verbs.add_parser(name, help=summary, description=description or summary[0].upper() + summary[1:] + ".",
                                epilog=VERB_EXAMPLES[name], formatter_class=argparse.RawDescriptionHelpFormatter)

    index = verb("index", "index a JSONL file or a folder of .txt/.md files",
                 "Build the index of SOURCE into the DuckDB file --db. The file is replaced atomically when the run "
                 "completes; readers keep the previous index until then.")
    index.add_argument("source", type=Path, help="a JSONL file (doc_id, title, text, entities, scope, metadata) "
                                                 "or a folder of .txt/.md files")
    index.add_argument("--db", type=Path, required=True, help="the DuckDB index file to write")
    _settings_flags(index)
    index.add_argument("--allow-rejects", action="store_true", help="exit 0 even when some records were rejected")
    index.add_argument("--fresh", action="store_true", help="rebuild from nothing instead of updating the index "
                       "(with the index's settings, and the settings flags given: no --reconfigure needed)")
    _run_flags(index)

    delete = verb("delete", "remove documents (and all they contributed) from the index",
                  "Remove DOC_IDs from the index and update everything derived from them.")
    delete.add_argument("doc_ids", nargs="+", metavar="DOC_ID", help="a document's doc_id (a folder source's: the "
                        "file's path relative to the folder)")
    delete.add_argument("--db", type=Path, required=True, help="the DuckDB index file to update")
    _settings_flags(delete)
    _run_flags(delete)

    serve = verb("serve", "serve a Prefect deployment: reindex on a cron schedule and on change events "
                 "(needs PREFECT_API_URL)")
    serve.add_argument("--source", type=Path, required=True, help="the JSONL file or folder to index "
                       "(stored as an absolute path)")
    serve.add_argument("--db", type=Path, required=True, help="the DuckDB index file to write "
                       "(stored as an absolute path)")
    serve.add_argument("--cron", default="0 3 * * *", help='schedule (default "0 3 * * *": 03:00 every night)')
    serve.add_argument("--name", default="acervo-reindex", help="deployment name (default acervo-reindex)")
    _settings_flags(serve)
    _reconfigure_flag(serve)

    watch = verb("watch", "watch the source and reindex when it changes (no server needed)")
    watch.add_argument("--source", type=Path, required=True, help="the JSONL file or folder to watch and index")
    watch.add_argument("--db", type=Path, required=True, help="the DuckDB index file to write")
    watch.add_argument("--interval", type=float, default=2.0, help="seconds between looks at the source (default 2)")
    watch.add_argument("--debounce", type=float, default=5.0, help="seconds the source must stay still (default 5)")
    watch.add_argument("--max-runs", type=int, help="stop after this many runs (the first run included)")
    watch.add_argument("--emit", action="store_true", help="only emit acervo.documents.changed events, "
                       "for a served deployment to act on")
    watch.add_argument("--wait", type=float, default=60.0, help="seconds to wait for another run on the same index "
                       "(default 60)")
    watch.add_argument("--no-prefect", action="store_true", help="run the stages without the Prefect engine")
    _settings_flags(watch)
    _reconfigure_flag(watch)

    query = verb("query", "assemble the context of a question (or of a JSONL file of questions)")
    query.add_argument("question", nargs="?", help="the question (omit with --questions)")
    query.add_argument("--db", type=Path, required=True, help="the DuckDB index file to read")
    query.add_argument("--questions", type=Path, help='JSONL of {"id", "question"}: one JSON result per line '
                       "(with --explain: one explanation per question)")
    query.add_argument("--budget", type=int, default=2048, help="token budget of the context (default 2048)")
    query.add_argument("--scope", nargs="*", dest="scopes", help="scopes the caller may read (default: all)")
    _graph_flags(query)
    query.add_argument("--mode", choices=["priority", "sliced"], default="priority",
                       help="priority (default): the best blocks of any kind first; sliced: each kind gets its "
                            "share of the budget")
    query.add_argument("--no-direct", action="store_true", help="never return whole documents")
    query.add_argument("--json", action="store_true", help="print the context as JSON (route, reason, blocks, "
                       "budget, refused, seeds)")
    query.add_argument("--explain", action="store_true", help="print the route, the seeds, the budget, every "
                       "block's score and the refused blocks")
    _vector_flags(query)

    evaluate = verb("eval", "gold-document recall of the assembled context, beside a BM25 baseline",
                    "Gold-document recall of the assembled context, beside a BM25 baseline; route accuracy, "
                    "empty contexts for off-topic and for answerable questions, query latency. A question "
                    "without supporting_doc_ids whose route is none or not given is off-topic (its context "
                    "should be empty); a route global or mixed, or \"scope\": \"global\", makes a global question "
                    "(it expects that route, either of the two for the scope, and community reports).")
    evaluate.add_argument("questions", type=Path, help="JSONL: question, supporting_doc_ids, optional route "
                          "(or scope global)")
    evaluate.add_argument("--db", type=Path, required=True, help="the DuckDB index file to read")
    evaluate.add_argument("--negatives", type=Path, action="append", default=[], metavar="FILE",
                          help="JSONL of off-topic questions evaluated beside QUESTIONS (none may have "
                               "supporting_doc_ids, a route other than none, or scope global); repeatable, e.g. "
                               "--negatives tests/data/offtopic_questions.jsonl")
    _graph_flags(evaluate)
    evaluate.add_argument("--limit", type=int, help="evaluate only the first N questions of QUESTIONS "
                          "(every --negatives question is kept)")
    evaluate.add_argument("--plot", type=Path, help="write a PNG of recall against budget (needs the plot extra: "
                          "pip install 'acervo[plot]')")
    evaluate.add_argument("--json", action="store_true", help="print the figures as JSON (no progress shown)")
    _vector_flags(evaluate)

    stats = verb("stats", "row counts, communities per level, largest communities")
    stats.add_argument("--db", type=Path, required=True, help="the DuckDB index file to read")
    stats.add_argument("--top", type=int, default=10, help="how many of the largest communities to list (default 10)")
    stats.add_argument("--json", action="store_true", help="print the summary as JSON")

    entities = verb("entities", "why candidate names became entities or not (mentions modes nlp and spacy)",
                    "Show the decision about each candidate name: kept, or rejected as rare, too frequent, or a "
                    "common word capitalised by its place (sentence start, heading, list item), with the counts "
                    "it was decided on.")
    entities.add_argument("--db", type=Path, required=True, help="the DuckDB index file to read")
    entities.add_argument("--why", nargs="+", metavar="NAME", help="the names to explain, however cased "
                          "(default: the candidates seen in most chunks)")
    entities.add_argument("--top", type=int, default=20, help="without --why: how many candidates to list, "
                          "those seen in most chunks first (default 20)")
    entities.add_argument("--rejected", action="store_true", help="without --why: list only candidates that "
                          "did not become entities")
    entities.add_argument("--json", action="store_true", help="print the decisions as JSON (entity_id, name, "
                          "kept, reason, canonical, counts, lowercase, why)")

    runs = verb("runs", "the ledger of index runs: per stage rows in/out and seconds")
    runs.add_argument("--db", type=Path, required=True, help="the DuckDB index file to read")
    runs.add_argument("--limit", type=int, default=20, help="how many of the latest runs to list (default 20)")
    runs.add_argument("--json", action="store_true", help="print the runs as JSON (stage fields as in index --json)")
    return parser


def _graph_flags(parser: argparse.ArgumentParser) -> None:
    """Flags that bound how far a question's context follows the entity graph."""
    parser.add_argument("--hops", type=int, default=2, help="follow edges up to N steps from the seed entities "
                        "(default 2)")
    parser.add_argument("--cap", type=int, default=8, help="follow each entity's N strongest neighbours (default 8)")


def _settings_flags(parser: argparse.ArgumentParser) -> None:
    """Flags that set index settings; a run without them keeps the index's own (see --reconfigure)."""
    parser.add_argument("--mentions", choices=["given", "gazetteer", "titles", "nlp", "spacy"],
                        help="how entities are found (default: given, the documents' own 'entities'; nlp: from the "
                             "text alone; spacy: with an installed spaCy pipeline)")
    parser.add_argument("--spacy-model", help="mode spacy: the pipeline's package name or folder "
                        "(default en_core_web_sm)")
    parser.add_argument("--gazetteer", type=Path, help="entity names: .jsonl of {label, aliases} or one name per line")
    parser.add_argument("--embed-url", help="an OpenAI-compatible embeddings endpoint (e.g. http://127.0.0.1:8080/v1): "
                        "entity vectors for seeding questions by meaning (default: none)")
    parser.add_argument("--embed-model", help="the model to ask that endpoint for")
    parser.add_argument("--edge-window", choices=["chunk", "paragraph", "sentence"],
                        help="entities co-occur when named in the same chunk (default), paragraph or sentence")
    parser.add_argument("--config", type=Path, help="TOML file of settings (see README); flags override it")
    parser.add_argument("--encoding", choices=["cl100k_base", "o200k_base"], help="tiktoken encoding for chunk sizes")
    parser.add_argument("--chunk-tokens", type=int, help="most tokens in a chunk (default 400)")


def _vector_flags(parser: argparse.ArgumentParser) -> None:
    """Flags that let a question be seeded by entity vectors (the index must have been built with them)."""
    parser.add_argument("--embed-url", help="the OpenAI-compatible embeddings endpoint the index's entity vectors "
                        "came from; questions that name no entity are then seeded by meaning")
    parser.add_argument("--embed-model", default="", help="the model to ask that endpoint for")
    parser.add_argument("--vector-floor", type=float, default=0.6, help="least cosine for a vector seed (default 0.6)")


def _run_flags(parser: argparse.ArgumentParser) -> None:
    """Flags every writing verb shares."""
    parser.add_argument("--wait", type=float, default=0.0, help="seconds to wait for another run on the same index "
                        "(default: refuse at once)")
    parser.add_argument("--no-prefect", action="store_true", help="run the same stages without the Prefect engine")
    parser.add_argument("--json", action="store_true", help="print the run summary as JSON")
    _reconfigure_flag(parser)


def _reconfigure_flag(parser: argparse.ArgumentParser) -> None:
    """The flag that lets a run change the settings the index was built with."""
    parser.add_argument("--reconfigure", action="store_true", help="allow settings flags (or --config) that differ "
                        "from the index's own, and recompute what they change (without it such a run exits 2)")


def _open(args: argparse.Namespace) -> Any:
    """The index at --db for questions, with the embedding endpoint of --embed-url when given."""
    from pipelines.embeddings import openai_compatible
    from pipelines.query.context import Index

    embed = openai_compatible(args.embed_url, args.embed_model) if args.embed_url else None
    return Index(args.db, embed=embed, vector_floor=args.vector_floor)


def _settings(args: argparse.Namespace) -> Any:
    """The settings --config and the flags give (only those), and whether --reconfigure lets them change the
    index's."""
    from pipelines.settings import Requested, given

    flags = {"mentions": args.mentions, "gazetteer": args.gazetteer, "encoding": args.encoding,
             "chunk_tokens": args.chunk_tokens, "spacy_model": args.spacy_model, "edge_window": args.edge_window,
             "embed_url": args.embed_url, "embed_model": args.embed_model}
    return Requested(given=given(args.config, **flags), reconfigure=getattr(args, "reconfigure", False))


def _resolved(args: argparse.Namespace, requested: Any, *, fresh: bool = False) -> Any:
    """The settings a run on args.db will use; each one it changes is printed, and without --reconfigure (or
    --fresh) a change raises SettingsChanged (exit 2) before anything is written."""
    from pipelines import reconfigure

    settings, changed = reconfigure.resolve(reconfigure.built_with(args.db), requested, fresh=fresh)
    for change in changed:
        print(f"acervo: setting {change.line()}", file=sys.stderr)
    return settings


def _index(args: argparse.Namespace) -> int:
    """`acervo index` and `acervo delete`: update, publish, report."""
    from pipelines import stats

    requested = _settings(args)
    source = getattr(args, "source", None)
    delete = getattr(args, "doc_ids", [])
    if source is not None and not source.exists():
        print(f"acervo: {source}: no such file or folder", file=sys.stderr)
        return BAD_INPUT
    check_target(args.db, source)
    settings = _resolved(args, requested, fresh=getattr(args, "fresh", False))
    if settings.mentions == "gazetteer" and (settings.gazetteer is None or not settings.gazetteer.is_file()):
        print("acervo: --mentions gazetteer needs an existing --gazetteer file", file=sys.stderr)
        return BAD_INPUT
    if delete:
        known = _read(args.db, lambda con: stats.documents_known(con, delete))
        unknown = sorted(set(delete) - set(known))
        if unknown:
            print(f"acervo: not in the index, nothing to delete: {', '.join(unknown)}", file=sys.stderr)
        if not known:
            return BAD_INPUT

    def progress(s: Any) -> None:
        w = s.work
        print(f"  {s.stage:<18} read {w.read:>8}  reused {w.reused:>8}  recomputed {w.recomputed:>8}  "
              f"removed {w.removed:>6}  {s.seconds:7.2f} s{_skipped(w.detail)}", file=sys.stderr)

    summary = _run(args, requested, source, delete=delete, fresh=getattr(args, "fresh", False),
                   progress=None if args.json else progress)
    summary |= _read(args.db, lambda con: {"db": str(args.db), "stats": stats.summary(con),
                                           "rejected": stats.rejected(con)})
    _print_index(summary, as_json=args.json)
    refuse = args.verb == "index" and summary["rejected"] and not args.allow_rejects
    return BAD_INPUT if refuse else OK


def _run(args: argparse.Namespace, settings: Any, source: Path | None, *, delete: list[str] | None = None,
         fresh: bool = False, progress: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """One index run into args.db, through the Prefect flow or (--no-prefect) the plain stages; its summary."""
    if args.no_prefect:
        from flows.build import publish

        run_id, stages = publish(source, args.db, settings, delete=delete or (), fresh=fresh, wait=args.wait,
                                 progress=progress)
        return {"run_id": run_id, "stages": [{**s.row(), "seconds": round(s.seconds, 3)} for s in stages]}
    from flows.index import ensure_temporary_server, index

    ensure_temporary_server()
    return index(source, args.db, settings, delete=delete, fresh=fresh, wait=args.wait)


def _questions(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) of each non-blank line of a JSONL file of questions; ValueError names a bad line."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
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
    print(f"indexed into {summary['db']} (run {summary['run_id']})")
    print("  " + "  ".join(f"{k} {v}" for k, v in tables.items() if k not in ("index_runs", "run_stages")))
    for level in summary["stats"]["levels"]:
        print(f"  level {level['level']}: {level['communities']} communities, "
              f"{level['min_members']}-{level['max_members']} members")
    for r in summary["rejected"][:20]:
        print(f"rejected {r['source']}:{r['line']}: {r['reason']}: {r['detail']}", file=sys.stderr)
    if len(summary["rejected"]) > 20:
        print(f"... and {len(summary['rejected']) - 20} more (table `rejected`)", file=sys.stderr)


def _serve(args: argparse.Namespace) -> int:
    """`acervo serve`: blocks, serving the deployment."""
    from flows.schedule import serve

    requested = _settings(args)
    _resolved(args, requested)
    serve(args.source, args.db, requested, cron=args.cron, name=args.name)
    return OK


def _watch(args: argparse.Namespace) -> int:
    """`acervo watch`: reindex (or emit an event) whenever the source settles after a change."""
    from flows.schedule import CHANGED, emit_changed, watch

    requested = _settings(args)
    check_target(args.db, args.source)
    _resolved(args, requested)
    first = True

    def on_change(n_files: int) -> None:
        nonlocal first
        what = f"first run over {n_files} file(s)" if first else f"{n_files} file(s) changed"
        first = False
        print(f"acervo watch: {what} under {args.source}", file=sys.stderr, flush=True)
        if args.emit:
            emit_changed(args.source, n_files)
            print(f"acervo watch: emitted {CHANGED} for {args.source}", file=sys.stderr, flush=True)
            return
        try:
            summary = _run(args, requested, args.source)
            documents = next(s for s in summary["stages"] if s["stage"] == "documents")
            print(f"acervo watch: run {summary['run_id']} published {args.db}: {documents['rows_recomputed']} "
                  f"document(s) new or changed, {documents['rows_removed']} removed, "
                  f"{documents['rows_reused']} unchanged", file=sys.stderr, flush=True)
        except Exception as err:  # noqa: BLE001 - a failed run must not stop the watcher
            print(f"acervo watch: run failed: {type(err).__name__}: {err}", file=sys.stderr, flush=True)

    watch(args.source, on_change=on_change, interval=args.interval, debounce=args.debounce, max_runs=args.max_runs)
    return OK


def _query(args: argparse.Namespace) -> int:
    """`acervo query`: one question, or a JSONL file of them in one process."""
    if (args.question is None) == (args.questions is None):
        print("acervo: give a QUESTION or --questions FILE, not both", file=sys.stderr)
        return BAD_INPUT
    knobs = {"budget": args.budget, "scopes": args.scopes, "hops": args.hops, "cap": args.cap, "mode": args.mode,
             "direct": not args.no_direct}
    with _open(args) as index:
        if args.questions is None:
            _print_context(index.query(args.question, **knobs), as_json=args.json, explain=args.explain)
            return OK
        for n, (number, item) in enumerate(_questions(args.questions)):
            context = index.query(item["question"], **knobs)
            qid = item.get("id", number)
            if args.explain and not args.json:
                print(f"{chr(10) if n else ''}== {qid}: {item['question']}")
                _explain(context)
            else:
                print(json.dumps({"id": qid, **context.to_dict()}, ensure_ascii=False), flush=True)
    return OK


def _print_context(context: Any, *, as_json: bool, explain: bool) -> None:
    """A context as JSON, as an explanation, or as the text to put in a prompt."""
    if as_json:
        print(context.to_json())
    elif explain:
        _explain(context)
    else:
        print(context.text if context.blocks else f"(no context) {context.reason}")


def _explain(context: Any) -> None:
    """How a context was assembled: route, seeds, budget, each block's score, and the blocks left out."""
    b = context.budget
    print(f"route {context.route}: {context.reason}")
    if context.seeds:
        print(f"seeds: {', '.join(context.seeds)}")
    print(f"budget {b['spent']}/{b['total']} tokens, truncation {b['truncation_rate']:.2%}, "
          f"components {b['components']}, by kind {b['by_kind']}")
    for block in context.blocks:
        print(f"  {block.kind:<12} score {block.score:<8} {block.tokens:>5} tokens  refs {block.refs}")
    refused: dict[str, list[str]] = {}
    for kind, key in context.refused:
        refused.setdefault(kind, []).append(key)
    for kind, keys in refused.items():
        print(f"  refused {len(keys)} {kind}: {', '.join(keys)}")


def _eval(args: argparse.Namespace) -> int:
    """`acervo eval`: recall at k documents and at token budgets, for acervo and the BM25 baseline."""
    from pipelines.query import evaluate

    if args.plot and not evaluate.can_plot():
        print("acervo: --plot needs matplotlib: pip install 'acervo[plot]'", file=sys.stderr)
        return BAD_INPUT
    if args.plot and not args.plot.parent.is_dir():
        print(f"acervo: --plot {args.plot}: no such folder {args.plot.parent}", file=sys.stderr)
        return BAD_INPUT
    questions = [item for _, item in _questions(args.questions)][: args.limit]
    questions += [item for path in args.negatives for item in _negatives(path)]
    with _open(args) as index, _eval_progress(len(questions), quiet=args.json) as progress:
        result = evaluate.run(index, questions, hops=args.hops, cap=args.cap, progress=progress)
    if args.json:
        _print_json(result)
    else:
        _print_eval(result)
    if args.plot:
        sys.stdout.flush()  # the figures are out before the plot is drawn, whatever happens to it
        evaluate.plot(result, str(args.plot))
    return OK


def _negatives(path: Path) -> list[dict[str, Any]]:
    """The off-topic questions of a --negatives file; ValueError names a line with gold documents or a route."""
    found = []
    for number, item in _questions(path):
        if item.get("supporting_doc_ids") or item.get("route") not in (None, "none") or item.get("scope") == "global":
            raise ValueError(f"{path}:{number}: a --negatives question must have no supporting_doc_ids, "
                             "no route but none, no scope global")
        found.append({**item, "route": "none"})
    return found


@contextmanager
def _eval_progress(total: int, *, quiet: bool) -> Iterator[Callable[[int], None] | None]:
    """A callback for each question evaluated: a progress bar on a terminal, a line per tenth of the questions
    otherwise; none with `quiet`."""
    if quiet or not total:
        yield None
    elif sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import MofNCompleteColumn, Progress

        with Progress(*Progress.get_default_columns(), MofNCompleteColumn(), console=Console(stderr=True),
                      transient=True) as bar:
            task = bar.add_task("questions", total=total)
            yield lambda done: bar.update(task, completed=done)
    else:
        step = max(1, total // 10)

        def line(done: int) -> None:
            if done % step == 0 or done == total:
                print(f"acervo eval: {done}/{total} questions", file=sys.stderr, flush=True)

        yield line


EVAL_ROWS = [("recall@2", "recall@2"), ("recall@5", "recall@5"), ("recall@10", "recall@10"),
             ("ceiling@2", "ceiling of recall@2"), ("recall@2_of_ceiling", "recall@2 / ceiling"),
             ("ceiling@5", "ceiling of recall@5"), ("recall@5_of_ceiling", "recall@5 / ceiling"),
             ("ceiling@10", "ceiling of recall@10"), ("recall@10_of_ceiling", "recall@10 / ceiling"),
             ("recall@512t", "recall@512t"), ("recall@1024t", "recall@1024t"), ("recall@2048t", "recall@2048t"),
             ("recall@4096t", "recall@4096t"), ("route_accuracy", "route accuracy"),
             ("negative_empty_rate", "off-topic empty"), ("answerable_empty_rate", "answerable empty"),
             ("global_route_rate", "global routed as expected"), ("global_report_rate", "global with reports"),
             ("latency_ms_p50", "latency p50 ms"), ("latency_ms_p95", "latency p95 ms"),
             ("tokens_used", "tokens used"), ("truncation_rate", "truncation rate")]


def _print_eval(result: dict[str, Any]) -> None:
    """The evaluation as tables (acervo beside the baseline, then per route), then why a figure is missing
    ('-'), one line per figure, starting with its JSON key."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from pipelines.query.evaluate import unmeasured

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
        routes.add_row(route, *(str(summary[f"questions{part}"]) for part in ("", "_with_gold", "_off_topic",
                                                                             "_global")),
                       _cell(summary["recall@5"]), _cell(summary["latency_ms_p50"]))
    console.print(routes)
    for key, _ in EVAL_ROWS:
        why = dict.fromkeys(unmeasured(name, key) for name in ("acervo", "baseline") if result[name][key] is None)
        if why:
            print(f"{key} '-': {'; '.join(why)}")


def _cell(value: Any) -> str:
    """A table cell: '-' for a missing figure."""
    return "-" if value is None else str(value)


def _read(db: Path, fn: Callable[[Any], Any]) -> Any:
    """`fn` applied to a read-only connection to the index `db`."""
    from pipelines.db import reader

    con = reader(db)
    try:
        return fn(con)
    finally:
        con.close()


def _print_json(value: Any) -> None:
    """`value` as indented JSON on standard output."""
    print(json.dumps(value, ensure_ascii=False, default=str, indent=2))


def _stats(args: argparse.Namespace) -> int:
    """`acervo stats`."""
    from pipelines import stats

    summary = _read(args.db, lambda con: {**stats.summary(con, largest=args.top), "settings": stats.settings(con)})
    if args.json:
        _print_json(summary)
        return OK
    print(f"settings: {_shown(summary['settings'])}")
    for name, n in summary["tables"].items():
        print(f"{name:<20} {n:>10}")
    print("bookkeeping (what reruns compare against):")
    for name, n in summary["bookkeeping"].items():
        print(f"  {name:<18} {n:>10}")
    for level in summary["levels"]:
        print(f"level {level['level']}: {level['communities']} communities "
              f"({level['min_members']}-{level['max_members']} members, mean {level['mean_members']})")
    for c in summary["largest_communities"]:
        print(f"{c['community_id']}  level {c['level']}  {c['n_members']:>5} members  "
              f"weight {c['weight']:>6}  {c['title']}")
    return OK


def _entities(args: argparse.Namespace) -> int:
    """`acervo entities`."""
    from pipelines import mentions

    found = _read(args.db, lambda con: mentions.decisions(con, args.why, top=args.top, rejected=args.rejected))
    if args.json:
        _print_json(found)
        return OK
    for d in found:
        verdict = "entity" if d["kept"] else "no entity"
        print(f"{d['name']} ({verdict}, in {d['n_chunks']} chunks): {d['why']}")
    return OK


def _runs(args: argparse.Namespace) -> int:
    """`acervo runs`."""
    from pipelines import runs

    history = _read(args.db, lambda con: runs.history(con, limit=args.limit))
    if args.json:
        _print_json(history)
        return OK
    for run in history:
        print(f"{run['run_id']}  {run['status']}  {run['started_at']} -> {run['finished_at']}  "
              f"rejected {run['n_rejected']}  {run['source']}")
        print(f"    settings: {_shown(run['settings'])}")
        for s in run["stages"]:
            print(f"    {s['stage']:<18} read {s['rows_read']:>8}  reused {s['rows_reused']:>8}  "
                  f"recomputed {s['rows_recomputed']:>8}  removed {s['rows_removed']:>6}  {s['seconds']:8.3f} s"
                  f"{_skipped(s['detail'])}")
    return OK


def _shown(settings: dict[str, Any] | None) -> str:
    """An index's settings for a person: those that differ from the defaults, as key=value."""
    from pipelines.settings import Settings

    if settings is None:
        return "none (no run yet)"
    defaults = Settings().model_dump(mode="json")
    changed = [f"{k}={v}" for k, v in settings.items() if defaults.get(k, v) != v or k not in defaults]
    return " ".join(changed) + " (others default)" if changed else "all default"


def _skipped(detail: Any) -> str:
    """A note for a stage the run skipped (no document and no setting changed), else nothing."""
    return "  skipped: nothing it reads changed" if (detail or {}).get("skipped") else ""


def main(argv: list[str] | None = None) -> int:
    """Run one verb; return its exit code."""
    args = _parser().parse_args(argv)
    verb = {"index": _index, "delete": _index, "serve": _serve, "watch": _watch, "query": _query,
            "eval": _eval, "stats": _stats, "entities": _entities, "runs": _runs}[args.verb]
    try:
        with stopping_on_signals():
            return verb(args)
    except KeyboardInterrupt as stop:
        return stopped(stop)
    except BrokenPipeError:  # the reader (head, less) went away: not an error of ours
        sys.stderr.close()
        return OK
    except IndexBusy as err:
        print(f"acervo: {err}", file=sys.stderr)
        return BUSY
    except ValidationError as err:
        from pipelines.settings import explain

        print(f"acervo: {explain(err)}", file=sys.stderr)
        return BAD_INPUT
    except (FileNotFoundError, PermissionError, ValueError) as err:
        print(f"acervo: {err}", file=sys.stderr)
        return BAD_INPUT
    except Exception as err:  # noqa: BLE001 - the CLI's last word: say what failed, exit 1
        print(f"acervo: {type(err).__name__}: {err}", file=sys.stderr)
        return FAILED


if __name__ == "__main__":
    sys.exit(main())
