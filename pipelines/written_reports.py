"""Stage `written_reports`: with a language model, a written summary of each community report, every
sentence citing chunks of the report's own inputs (its key evidence and its members' answers), verified
before it is stored (pipelines.citations).

Optional: it runs only with a model (settings llm_url / llm_model, or a Chat passed in); without one, no
written report is kept and the extractive reports are all there is. A reply that fails verification twice
is stored without text and with its reason: the extractive report stands, and the row is not asked again
until its inputs change. A row the run's budget had no room for is not stored: the next run writes it.
"""

from pipelines import citations
from pipelines.citations import Task
from pipelines.db import sql
from pipelines.llm import Meter
from pipelines.run import Run
from pipelines.runs import SKIPPED, Work
from pipelines.text import ANSWERS, EVIDENCE

VERSION = "written-report-1"  # what a prompt shows: the members' lines and the key evidence, then the citable ids
PROMPT = "written_report"  # pipelines/prompts/written_report.txt, the system message
READS = ("community_reports",)  # the stages whose tables this stage reads (its own aside)


def run(run: Run, *, llm: Meter | None, model: str = "") -> Work:
    """Write the summary of every report whose extractive input hash changed (every one after a change of
    model or prompt); drop those of vanished reports; drop every one when `llm` is None. An index never
    given a model stores no setting for the stage: its tables are those of an index made before the stage.

    `model` names the model: summaries written by another one are all written again.
    """
    con = run.con
    if llm is None and run.get("written_reports") is None:  # never with a model: no row to drop, no setting to store
        return SKIPPED if run.logged else Work(con.execute(sql("written_reports.communities")).fetchone()[0], 0, 0)
    setting = f"{VERSION}:{model}:{citations.prompt(PROMPT).version}" if llm is not None else ""
    if run.unchanged(READS, "written_reports", setting):
        return SKIPPED
    n_reports = con.execute(sql("written_reports.communities")).fetchone()[0]
    if llm is None:
        with run.transaction():
            removed = len(con.execute(sql("written_reports.delete_all")).fetchall())
            run.put("written_reports", setting)
        return Work(n_reports, 0, 0, removed)
    con.execute(sql("written_reports.todo"), {"setting": setting})
    todo = [_task(*row) for row in con.execute(sql("written_reports.todo_rows")).fetchall()]
    before = llm.usage
    done = citations.generate(llm, todo)
    replaced = con.execute(sql("written_reports.replaced")).fetchone()[0]
    kept = [(task, w) for task, w in zip(todo, done, strict=True) if w.stored]
    with run.transaction():
        deleted = con.execute(sql("written_reports.delete")).fetchone()[0]
        run.insert("written_reports", ({"community_id": task.key, "report": w.text, "refs": list(w.refs),
                                        "inputs": list(task.inputs), "reason": w.reason,
                                        "input_hash": task.input_hash} for task, w in kept))
        run.put("written_reports", setting if len(kept) == len(todo) else citations.INCOMPLETE + setting)
    return Work(n_reports, n_reports - len(todo), len(kept), deleted - replaced, citations.detail(llm, before, done))


def _task(community_id: str, report: str, evidence_refs: list[str], line_refs: list[str], digest: str) -> Task:
    """The request for one report's summary: its members' lines (most central first) and key evidence
    sentences as the stored report shows them, and the chunks they cite, which alone it may cite."""
    inputs = tuple(dict.fromkeys([*evidence_refs, *line_refs]))
    shown = report.split("\n")
    members = shown[shown.index(ANSWERS) + 1:]
    evidence = shown[shown.index(EVIDENCE) + 1:shown.index(ANSWERS)] if EVIDENCE in shown else []
    user = "\n".join(["Members, most central first:", *members,
                      *(["Key evidence:", *evidence] if evidence else []), citations.allowed_line(inputs)])
    return Task(community_id, citations.messages(citations.prompt(PROMPT), user), inputs, digest)
