"""Stage `community_reports`: a map of member answers, every line and reference backed by a chunk."""

from conftest import SAMPLE, index_of


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
    for report, refs in con.execute("select report, evidence_refs from community_reports").fetchall():
        lines = report.split("\n")
        assert refs and lines
        assert all(line.startswith("- ") and line.endswith("]") and "[" in line for line in lines)


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
    assert con.execute("select max(len(string_split(report, chr(10)))) from community_reports").fetchone()[0] <= 3
