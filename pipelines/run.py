"""One index run's state, passed to every stage: its connection, the settings stored with the index, and
what this run's stages changed."""

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from acervo.pipelines import bulk, db, shards
from acervo.pipelines.db import Connection


@dataclass
class Run:
    """A run over `con`.

    `logged`: a change log (the temporary table `changed`) is open, so later stages look only at what it
    names; a stage run on its own (`Run.alone`) checks everything, which gives the same rows, only slower.
    `stored`: the table index_state as read when the run began, kept current by `put`.
    `changed`: the stages that wrote or removed rows in this run, for `unchanged`.
    `scratch`: the folder bulk-insert files go in (None: the system's temporary folder).
    `in_transaction`: a `transaction()` block is open; a nested one joins it.
    `fanout`: where stages send their per-document work in shards (pipelines.shards); None: they do it here.
    """

    con: Connection
    logged: bool = False
    stored: dict[str, str] = field(default_factory=dict)
    changed: set[str] = field(default_factory=set)
    scratch: Path | None = None
    in_transaction: bool = False
    fanout: shards.Fanout | None = None

    @classmethod
    def alone(cls, con: Connection, *, scratch: Path | None = None) -> "Run":
        """A run over `con` with index_state read now and no change log (a stage called on its own)."""
        return cls(con, stored=_stored(con), scratch=scratch)

    @contextmanager
    def logging(self) -> Iterator["Run"]:
        """Keep a change log open while the block runs; the log is emptied before and after."""
        self.con.execute(db.sql("run.clear_changed"))
        self.logged, self.changed = True, set()
        try:
            yield self
        finally:
            self.logged = False
            with suppress(duckdb.Error):  # an aborted transaction refuses it, and its rollback clears the log
                self.con.execute(db.sql("run.clear_changed"))

    def get(self, key: str) -> str | None:
        """The value stored under `key` in index_state, or None."""
        return self.stored.get(key)

    def put(self, key: str, value: str) -> None:
        """Store `value` under `key` in index_state; an unchanged value is left as it is."""
        was = self.stored.get(key)
        if was != value:
            self.con.execute(db.sql("run.state_insert" if was is None else "run.state_update"),
                             {"key": key, "value": value})
            self.stored[key] = value

    def note(self, ref: str, params: Mapping[str, Any] | None = None) -> None:
        """Run the statement `ref`, which logs ids into `changed`, when a change log is open."""
        if self.logged:
            self.con.execute(db.sql(ref), dict(params or {}))

    def unchanged(self, reads: Iterable[str], key: str, setting: str) -> bool:
        """Whether a stage has nothing to do: a change log is open, none of the stages it `reads` changed
        rows in this run, and the setting it stored under `key` is `setting`."""
        return self.logged and not (self.changed & set(reads)) and self.stored.get(key) == setting

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """Commit on success, roll back on any error; inside the run's own transaction, join it."""
        if self.in_transaction:
            yield self.con
            return
        self.in_transaction = True
        try:
            with db.transaction(self.con):
                yield self.con
        finally:
            self.in_transaction = False

    def commit(self) -> None:
        """Commit what the run's transaction holds and go on in a new one: DuckDB frees a transaction's new rows
        and dropped tables only at its end. Outside a transaction, nothing to do."""
        if self.in_transaction:
            self.con.commit()
            self.con.begin()

    def scratch_tables(self) -> set[str]:
        """The temporary tables on the run's connection."""
        return {name for (name,) in self.con.execute(db.sql("run.scratch_tables")).fetchall()}

    def drop_scratch(self, tables: Iterable[str]) -> None:
        """Drop these temporary tables (a stage's scratch tables, once it is done)."""
        for name in sorted(tables):
            self.con.execute(db.sql("run.drop_scratch").format(table=db.identifier(name, db.tables())))

    def insert(self, table: str, rows: Iterable[Mapping[str, Any]], *, replace: bool = False) -> int:
        """Bulk-insert `rows` into `table` (see pipelines.bulk.insert), with files in the run's scratch folder."""
        return bulk.insert(self.con, table, rows, folder=self.scratch, replace=replace)

    def spread(self, inputs: str, work: shards.Rows, knobs: Mapping[str, Any], table: str, *,
               replace: bool = False, multiple: int = 1) -> int:
        """Make the rows of `table` from those of the statement `inputs` by `work` through the run's fan-out, in
        shards (see pipelines.shards.spread), and insert them (with `replace`, over the stored rows of their key);
        how many."""
        paths = shards.spread(self.con, self.fanout, inputs, work, knobs, table, multiple=multiple)
        return shards.merge(self.con, table, paths, replace=replace)

    def shared(self, ref: str, name: str) -> str:
        """Write what every shard of a stage reads by the statement `ref` for the run's fan-out (see
        pipelines.shards.shared); the file's path."""
        return shards.shared(self.con, self.fanout, ref, name)

    def ids(self, ref: str, ids: Iterable[str]) -> int:
        """Make the scratch relation of the statement `ref` hold `ids` (see pipelines.bulk.ids)."""
        return bulk.ids(self.con, ref, ids)


def _stored(con: Connection) -> dict[str, str]:
    """index_state as a dict."""
    return dict(con.execute(db.sql("run.state")).fetchall())

