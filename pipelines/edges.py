"""Stage `edges`: co-occurrence edges with each entity's neighbours ranked (sql/edges.sql)."""

from pipelines.db import Connection, sql, transaction


def run(con: Connection) -> tuple[int, int]:
    """Rebuild `edges` and entities.degree from `mentions`; return (mentions read, edge rows)."""
    with transaction(con):
        con.execute("delete from edges")
        con.execute(sql("edges"))
        con.execute(sql("entity_degrees"))
    return (con.execute("select count(*) from mentions").fetchone()[0],
            con.execute("select count(*) from edges").fetchone()[0])
