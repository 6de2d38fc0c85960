"""Stage `edges`: co-occurrence edges with each entity's neighbours ranked (sql/edges.sql)."""

from pipelines import changes
from pipelines.db import Connection, sql, transaction
from pipelines.runs import Work


def run(con: Connection) -> Work:
    """Bring `edges` and entities.degree in line with `mentions`; unchanged rows stay as they are.

    Within a run, only the entities whose mentions changed, and their old and new neighbours, have
    their edge rows computed again; on its own the stage computes every entity's.
    """
    with transaction(con):
        con.execute("delete from keys where kind = 'src'")
        con.execute(sql("edges_scope"), {"full": not changes.active(con)})
        con.execute(sql("edges"))
        changes.note(con, "changed_edges")
        removed = con.execute(sql("edges_delete")).fetchone()[0]
        added = con.execute(sql("edges_insert")).fetchone()[0]
        con.execute(sql("entity_degrees"))
    total = con.execute("select count(*) from edges").fetchone()[0]
    scope = con.execute("select count(*) from keys where kind = 'src'").fetchone()[0]
    return Work(scope, total - added, added, removed)
