"""Stage `written_reports`: with a language model, a written summary of each community report, every
sentence citing chunks of the report's own inputs (its key evidence and its members' answers), verified
before it is stored (pipelines.citations).

Optional: it runs only with a model (settings llm_url / llm_model, or a Chat passed in); without one, no
written report is kept and the extractive reports are all there is. A reply that fails verification twice
is stored without text and with its reason: the extractive report stands, and the row is not asked again
until its inputs change. A row the run's budget had no room for is not stored: the next run writes it.
"""

from collections.abc import Iterator

from acervo.pipelines import citations
from acervo.pipelines.citations import Task
from acervo.pipelines.db import sql
from acervo.pipelines.llm import Meter
from acervo.pipelines.report_lines import ANSWERS, EVIDENCE
from acervo.pipelines.run import Run
from acervo.pipelines.runs import Work
from acervo.pipelines.stage import Hashed
from acervo.pipelines.written import written

VERSION = "written-report-1"  # what a prompt shows: the members' lines and the key evidence, then the citable ids
PROMPT = "written_report"  # pipelines/prompts/written_report.txt, the system message
READS = ("community_reports",)  # the stages whose tables this stage reads (its own aside)
STAGE = Hashed("written_reports", READS, "community_id", "written_report_todo",
               "community_reports", optional=True)


def run(run: Run, *, llm: Meter | None, model: str = "") -> Work:
    """Write the summary of every report whose extractive input hash changed (every one after a change of
    model or prompt); drop those of vanished reports; drop every one when `llm` is None."""
    return written(run, STAGE, llm, _tasks, version=VERSION, prompt=PROMPT, model=model, key="community_id",
                   text="report")


def _tasks(run: Run) -> Iterator[list[Task]]:
    """The requests of the reports of written_report_todo, in one batch."""
    yield [_task(*row) for row in run.con.execute(sql("written_reports.todo_rows")).fetchall()]


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
