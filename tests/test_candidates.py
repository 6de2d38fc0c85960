"""Mentions mode `nlp`: entity candidates from the text alone, in English and Portuguese."""

from pathlib import Path

from acervo.pipelines.candidates import candidates
from conftest import index_of, write_jsonl


def test_names_keep_their_inner_prepositions_in_both_languages():
    assert candidates("The Bank of England met the Ministério da Saúde in São Paulo.")[0] == [
        "Bank of England", "Ministério da Saúde", "São Paulo"]


def test_coordinated_names_stay_apart_and_sentence_starts_are_dropped():
    assert candidates("Only yesterday Truman and Roosevelt spoke. However, NATO agreed.")[0] == [
        "Truman", "Roosevelt", "NATO"]


def test_possessives_are_stripped_and_acronyms_defined_by_the_text_are_paired():
    names, defined = candidates("Smith's plan went to the World Health Organization (WHO) and the OMS.")
    assert names == ["Smith", "World Health Organization", "WHO", "OMS"]
    assert defined == [("WHO", "World Health Organization")]


def test_acronyms_written_with_stops_are_names_that_may_end_a_longer_one_but_never_run_into_the_next_sentence():
    assert candidates("The U.S. Department of Justice met the U.N. in Washington D.C. Then the F.A.C.E. School "
                      "opened.")[0] == ["U.S.", "Department of Justice", "U.N.", "Washington D.C.", "F.A.C.E.",
                                        "School"]


def test_code_identifiers_are_candidates_and_shouted_headings_are_not():
    assert candidates("PRESIDENT'S ADDRESS TO CONGRESS\nCall parse_config before getUserName.")[0] == [
        "Call", "parse_config", "getUserName"]


def test_nlp_mode_indexes_names_seen_in_enough_chunks_and_maps_acronyms(tmp_path: Path):
    records = [
        {"doc_id": "1", "text": "The World Health Organization (WHO) works with the Ministério da Saúde."},
        {"doc_id": "2", "text": "The WHO and the Ministério da Saúde met in Brasília."},
        {"doc_id": "3", "text": "The Ministério da Saúde published a report about Brasília."},
        {"doc_id": "4", "text": "Nothing named here at all."}]
    first = index_of(write_jsonl(tmp_path / "d.jsonl", records), mentions="nlp")
    labels = dict(first.execute("select entity_id, label from entities").fetchall())
    assert labels == {"world health organization": "World Health Organization",
                      "ministério da saúde": "Ministério da Saúde", "brasília": "Brasília"}
    assert first.execute("select count(*) from mentions where entity_id = 'world health organization'"
                         ).fetchone() == (2,)
    assert ("world health organization", "WHO") in first.execute("select entity_id, alias from entity_aliases"
                                                                 ).fetchall()
    again = index_of(write_jsonl(tmp_path / "d.jsonl", records), mentions="nlp")
    assert first.execute("select * from mentions order by all").fetchall() == again.execute(
        "select * from mentions order by all").fetchall()


def test_a_plural_counts_for_its_singular_unless_it_is_written_in_capitals(tmp_path: Path):
    records = [
        {"doc_id": "1", "text": "Yesterday the Republicans voted."},
        {"doc_id": "2", "text": "Then one Republican spoke about AIDS."},
        {"doc_id": "3", "text": "Now the Republicans talked about AIDS and Aid budgets."}]
    con = index_of(write_jsonl(tmp_path / "d.jsonl", records), mentions="nlp", nlp_min_chunks=1)
    counts = dict(con.execute("select entity_id, n_chunks from entities").fetchall())
    assert counts["republican"] == 3 and "republicans" not in counts
    assert counts["aids"] == 2 and counts["aid"] == 1
    assert ("republican", "Republicans") in con.execute("select entity_id, alias from entity_aliases").fetchall()
