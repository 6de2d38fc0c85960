"""The steps every hash-invalidated stage takes, run from its description (`Hashed`) by `refresh`.

Such a stage writes one row per source row (an entity, a community, a chunk) with the hash of what the row was
made from. Its sql/<name>.sql names its statements alike:

    scope       (if `scoped`) the rows this run's change log points at, into a scratch relation
    inputs      (if `ranged`) the table macro of a range's todo rows, which todo and todo_range read
    todo        (create ... as) the scratch relation of rows whose input hash differs from the stored one; if
                `ranged`, empty, and then
    ranges      the last key of each range of $n rows of the scope, and
    todo_range  (insert into) the todo's rows of the range after $after (null: from the first) up to $last
    read        how many source rows the stage covers
    changed     (if `logs`) log the rows just written into the change log
    delete_all  (if `optional`) without its service (an embedder, a model): delete every row

Each gets those of $full, $setting and the stage's own parameters it names; a stage's own parameter that none
of them names is refused. sql/stage.sql counts the rows the todo replaces and deletes them with the rows whose
source is gone, for every such stage alike.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from acervo.pipelines.db import KEYS, execute, identifier, parameters, sql, statements, tables
from acervo.pipelines.run import Run
from acervo.pipelines.runs import SKIPPED, Work

RANGE = 50_000  # scoped rows whose inputs a ranged stage's todo aggregates at a time
INCOMPLETE = "incomplete:"  # prefixes the setting a stage stores when it left todo rows unwritten: the next run
                            # looks at every row again


@dataclass(frozen=True)
class Hashed:
    """A hash-invalidated stage: `name` is its index_state key, its table and its sql/ file; `reads` the stages
    whose tables it reads (its own aside), so that it skips itself when none of them changed rows in this run."""

    name: str
    reads: tuple[str, ...]
    key: str  # its id column, that of `source` too
    todo: str  # the scratch relation its `todo` statement makes
    source: str  # the table whose rows it writes a row for (an entity, a community, a chunk, ...)
    scoped: bool = False  # a scope statement narrows the todo to what the change log names (unless $full)
    logs: bool = False  # a changed statement logs the rows written, for the stages after it
    optional: bool = False  # it runs only with a service; without one (setting ""), it keeps no rows
    ranged: bool = False  # its todo is made RANGE scoped rows at a time, so memory holds one range's inputs


def refresh(run: Run, stage: Hashed, setting: str, write: Callable[[Run], int], **params: Any) -> Work:
    """Bring `stage`'s rows in line with its inputs under `setting` (what else its rows depend on): nothing when
    nothing it reads changed; else delete the rows of its todo and of vanished inputs, and `write` the todo's
    rows (it returns how many it wrote). Without its service (an optional stage's setting ""), delete every row.

    Within a run, a scoped stage hashes only the rows the change log points at, unless its setting changed.
    """
    _used(stage, params)
    if run.unchanged(stage.reads, stage.name, setting):
        return SKIPPED
    name = stage.name
    n_read = execute(run.con, f"{name}.read").fetchone()[0]
    if stage.optional and not setting:
        with run.transaction():
            removed = len(execute(run.con, f"{name}.delete_all").fetchall())
            run.put(name, setting)
        return Work(n_read, 0, 0, removed)
    params = {"full": not run.logged or run.get(name) != setting, "setting": setting, **params}
    if stage.scoped:
        execute(run.con, f"{name}.scope", _for(f"{name}.scope", params))
    todo = (_ranged_todo(run, name, params) if stage.ranged
            else execute(run.con, f"{name}.todo", _for(f"{name}.todo", params)).fetchone()[0])
    names = {"table": identifier(name, tables()), "key": identifier(stage.key, KEYS),
             "todo": identifier(stage.todo, tables()), "source": identifier(stage.source, tables())}
    replaced = run.con.execute(sql("stage.replaced").format(**names)).fetchone()[0]
    with run.transaction():
        deleted = run.con.execute(sql("stage.delete").format(**names)).fetchone()[0]
        written = write(run)
        if stage.logs:
            run.note(f"{name}.changed")
        run.put(name, setting if written == todo else INCOMPLETE + setting)
    return Work(n_read, n_read - todo, written, deleted - replaced)


def _ranged_todo(run: Run, name: str, params: dict[str, Any]) -> int:
    """Make the todo of the ranged stage `name` RANGE scoped rows at a time; return how many rows it holds."""
    execute(run.con, f"{name}.inputs")
    execute(run.con, f"{name}.todo", _for(f"{name}.todo", params))
    todo, after = 0, None
    for (last,) in execute(run.con, f"{name}.ranges", {"n": RANGE}).fetchall():
        bound = _for(f"{name}.todo_range", {**params, "after": after, "last": last})
        todo += execute(run.con, f"{name}.todo_range", bound).fetchone()[0]
        after = last
    return todo


def _used(stage: Hashed, params: dict[str, Any]) -> None:
    """ValueError for one of the stage's own `params` that none of its scope, todo and todo_range statements
    names: a misspelt name would otherwise reach none of them."""
    named = frozenset().union(*(parameters(f"{stage.name}.{s}") for s in ("scope", "todo", "todo_range")
                                if s in statements(stage.name)))
    if unnamed := sorted(params.keys() - named):
        raise ValueError(f"stage {stage.name}: none of its statements names the parameter ${unnamed[0]}")


def _for(ref: str, params: dict[str, Any]) -> dict[str, Any]:
    """Those of the run's `params` ($full, $setting and the stage's own, each checked by `_used`) that the
    statement `ref` names: the stage's statements share them, and each names the few it reads."""
    return {k: v for k, v in params.items() if k in parameters(ref)}
