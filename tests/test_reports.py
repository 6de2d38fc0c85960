"""Stage `community_reports`: a summary (central members, key evidence sentences) and member answers,
every line and reference backed by a chunk."""

from acervo.pipelines.report_lines import ANSWERS, EVIDENCE, MEMBERS
from acervo.pipelines.reports import key_sentence, summary
from conftest import SAMPLE, SEED, index_of


def assert_reports_resolve(con) -> None:
    n_communities = con.execute("select count(*) from communities").fetchone()[0]
    assert con.execute("select count(*) from community_reports").fetchone()[0] == n_communities
    dangling = con.execute("""
        select count(*) from (
            select unnest(evidence_refs) as ref from community_reports
            union all select evidence_ref from report_lines
            union all select evidence_ref from entity_answers
        ) r anti join chunks c on c.chunk_id = r.ref""").fetchone()[0]
    assert dangling == 0
    known = {c for (c,) in con.execute("select chunk_id from chunks").fetchall()}
    for report, refs in con.execute("select report, evidence_refs from community_reports").fetchall():
        lines = report.split("\n")
        assert refs and lines[0].startswith(MEMBERS) and ANSWERS in lines
        cited = [line for line in lines if line.startswith("- ")]
        assert cited and all(line.endswith("]") and line[:-1].rsplit("[", 1)[1] in known for line in cited)


def test_seed_reports_cite_the_chunks_that_mention_most_members(seed):
    rows = seed.execute("""
        select c.weight, list(ch.doc_id order by ref.place)
        from community_reports r
        join communities c using (community_id),
             unnest(r.evidence_refs) with ordinality as ref(chunk_id, place)
        join chunks ch on ch.chunk_id = ref.chunk_id
        group by c.community_id, c.weight
        order by c.weight desc, 2""").fetchall()
    assert rows == [(5, ["d01", "d02", "d03"]), (5, ["d08", "d09", "d10"]), (3, ["d06", "d05", "d07"])]
    assert_reports_resolve(seed)


def test_a_report_lists_members_most_central_first_with_their_answers(seed):
    cid = seed.execute("select community_id from community_members where entity_id = 'rede'").fetchone()[0]
    lines = seed.execute("select entity_id, text, evidence_ref from report_lines where community_id = ? order by ord",
                         [cid]).fetchall()
    central = seed.execute("select entity_id from community_members where community_id = ? order by centrality",
                           [cid]).fetchall()
    assert [eid for eid, _, _ in lines] == [eid for (eid,) in central]
    answers = dict(seed.execute("select entity_id, answer from entity_answers").fetchall())
    for eid, text, ref in lines:
        assert answers[eid] in text and text.endswith(f"[{ref}]")


def test_every_sample_reference_resolves_and_long_reports_are_bounded():
    con = index_of(SAMPLE, mentions="titles", report_max_lines=3)
    assert_reports_resolve(con)
    longest = "select max(n) from (select count(*) as n from report_lines group by community_id)"
    assert con.execute(longest).fetchone()[0] <= 3


def test_a_report_summarises_its_community_with_its_key_evidence_sentences(seed):
    """The seed's billing community: its central members first, then from each supporting chunk the
    sentence naming most members, cited by that chunk, before the member answers."""
    cid = seed.execute("select community_id from community_members where entity_id = 'faturação'").fetchone()[0]
    report, refs = seed.execute("select report, evidence_refs from community_reports where community_id = ?",
                                [cid]).fetchone()
    lines = report.split("\n")
    central = [label for (label,) in seed.execute(
        "select e.label from community_members m join entities e using (entity_id) where community_id = ? "
        "order by centrality limit 2", [cid]).fetchall()]
    assert lines[0].startswith(MEMBERS) and all(label in lines[0] for label in central)
    evidence = lines[lines.index(EVIDENCE) + 1:lines.index(ANSWERS)]
    assert [line.rsplit("[", 1)[1][:-1] for line in evidence] == list(refs)
    texts = dict(seed.execute("select chunk_id, text from chunks").fetchall())
    for line, ref in zip(evidence, refs, strict=True):
        sentence = line[2:].rsplit(" [", 1)[0]
        assert sentence in " ".join(texts[ref].split())  # verbatim from the chunk it cites
    assert SEED.exists()


def test_key_evidence_says_a_sentence_once_however_its_case_accents_or_quotes_differ():
    members = [{"label": "Kevin Scott"}, {"label": "Microsoft"}]
    greeting = "I’m your host, Kevin Scott, CTO of Microsoft. We talk tech."
    evidence = [("e1#a", greeting, frozenset()), ("e2#b", "I'm your host, KEVIN SCOTT, CTO of Microsoft!", frozenset()),
                ("e3#c", "Kevin Scott joined Microsoft in 2017.", frozenset()), ("e4#d", greeting, frozenset())]
    lines = summary(members, evidence)
    shown = lines[lines.index(EVIDENCE) + 1:lines.index(ANSWERS)]
    assert [line.rsplit("[", 1)[1][:-1] for line in shown] == ["e1#a", "e3#c"]  # the first of each, in order


def test_the_key_sentence_names_the_most_members_the_first_of_those_tied():
    text = "Ann met Bob. Also, Ann and Bob met Cy. Cy, Bob and Ann met again."
    assert key_sentence(text, ["Ann", "Bob", "Cy", "Al"]) == "Also, Ann and Bob met Cy."  # "al" is in no sentence
    assert key_sentence(text, ["Dee"]) == "Ann met Bob."  # none named: the first
    assert key_sentence("Tom also ran. Al ran far.", ["Tom", "Al"]) == "Tom also ran."
