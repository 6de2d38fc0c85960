"""Stage `edges`: co-occurrence edges with each entity's neighbours ranked (sql/edges.sql)."""

from pipelines import changes, state
from pipelines.db import Connection, sql, transaction
from pipelines.runs import Work


def run(con: Connection, *, min_weight: int = 1, top_k: int | None = None) -> Work:
    """Bring `edges` and entities.degree in line with `mentions`; unchanged rows stay as they are.

    A pair needs `min_weight` shared chunks; each entity keeps its `top_k` strongest rows (None: all).
    Within a run, only the entities whose mentions changed, and their old and new neighbours, have
    their edge rows computed again; on its own, or after a change of settings, every entity's.
    """
    setting = f"{min_weight}:{top_k}"
    full = not changes.active(con) or state.get(con, "edges") != setting
    with transaction(con):
        con.execute("delete from keys where kind = 'src'")
        con.execute(sql("edges_scope"), {"full": full})
        con.execute(sql("edges"), {"min_weight": min_weight, "top_k": top_k})
        changes.note(con, "changed_edges")
        removed = con.execute(sql("edges_delete")).fetchone()[0]
        added = con.execute(sql("edges_insert")).fetchone()[0]
        con.execute(sql("entity_degrees"))
        state.put(con, "edges", setting)
    total = con.execute("select count(*) from edges").fetchone()[0]
    scope = con.execute("select count(*) from keys where kind = 'src'").fetchone()[0]
    return Work(scope, total - added, added, removed)
