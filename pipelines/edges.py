"""Stage `edges`: co-occurrence edges with each entity's neighbours ranked (sql/edges.sql)."""

from pipelines.db import Connection, sql, transaction
from pipelines.runs import Work


def run(con: Connection) -> Work:
    """Bring `edges` and entities.degree in line with `mentions`; unchanged rows stay as they are."""
    with transaction(con):
        con.execute(sql("edges"))
        removed = con.execute(sql("edges_delete")).fetchone()[0]
        added = con.execute(sql("edges_insert")).fetchone()[0]
        con.execute(sql("entity_degrees"))
    total = con.execute("select count(*) from edges").fetchone()[0]
    mentions = con.execute("select count(*) from mentions").fetchone()[0]
    return Work(mentions, total - added, added, removed)
