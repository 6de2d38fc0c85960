"""Stage `edges`: co-occurrence edges with each entity's neighbours ranked (sql/edges.sql)."""

from acervo.pipelines.db import sql
from acervo.pipelines.run import Run
from acervo.pipelines.runs import SKIPPED, Work
from acervo.pipelines.settings import EdgeSetting

READS = ("mentions",)  # the stages whose tables this stage reads (its own aside)


def run(run: Run, *, min_weight: int = 1, top_k: int | None = None) -> Work:
    """Bring `edges` and entities.degree in line with `mentions`; unchanged rows stay as they are.

    A pair needs `min_weight` shared chunks; each entity keeps its `top_k` strongest rows (None: all).
    Within a run, only the entities whose mentions changed, and their old and new neighbours, have
    their edge rows computed again; on its own, or after a change of settings, every entity's.
    """
    con = run.con
    setting = EdgeSetting(min_weight=min_weight, top_k=top_k).model_dump_json()
    if run.unchanged(READS, "edges", setting):
        return SKIPPED
    full = not run.logged or run.get("edges") != setting
    with run.transaction():
        con.execute(sql("edges.scope"), {"full": full})
        con.execute(sql("edges.ranked"))
        con.execute(sql("edges.next"), {"min_weight": min_weight, "top_k": top_k})
        run.note("edges.changed")
        removed = con.execute(sql("edges.delete")).fetchone()[0]
        added = con.execute(sql("edges.insert")).fetchone()[0]
        con.execute(sql("edges.degrees"))
        run.put("edges", setting)
    total = con.execute(sql("edges.count")).fetchone()[0]
    scope = con.execute(sql("edges.scoped")).fetchone()[0]
    return Work(scope, total - added, added, removed)
