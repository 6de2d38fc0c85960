"""Entity names: stable ids and the matcher, for any characters a name may hold."""

from hypothesis import given
from hypothesis import strategies as st

from acervo.pipelines.matcher import Matcher
from acervo.pipelines.names import entity_id, position, problem, words

ODD = ["A|B", "B", 'Say "hi"', "O'Brien", "🚀 Launch", "שלום עולם", "مرحبا", "C++", "Ministério da Saúde"]


def test_entity_id_is_nfc_casefolded_with_collapsed_space():
    assert entity_id("  São\u00a0  PAULO ") == "são paulo"
    assert entity_id("Sa\u0303o Paulo") == entity_id("São Paulo")
    assert entity_id("Straße") == "strasse"


def test_unusable_names_are_explained():
    assert problem("a\x00b") == "contains a control character (NUL included)"
    assert problem("   ") == "is empty"
    assert problem("x" * 301).startswith("is longer than")
    assert all(problem(n) is None for n in ODD)


def test_odd_names_are_found_on_token_boundaries():
    m = Matcher([(n, entity_id(n)) for n in ODD])
    text = ('In A|B we trust; b too. She said "hi"? No: Say "hi". o\'brien 🚀 launch. '
            "שלום עולם! مرحبا c++ ministerio da saude")
    assert m.find(text) == {entity_id(n) for n in ODD}


def test_matching_ignores_case_and_accents_but_not_word_boundaries():
    m = Matcher([("Rede", "rede"), ("Acesso a dados", "acesso a dados")])
    assert m.find("REDES e acessos a dados") == set()
    assert m.find("a rede; ACESSO A DADOS.") == {"rede", "acesso a dados"}


def test_a_run_of_thai_letters_is_words_of_pairs_and_a_name_inside_it_matches():
    assert words("กรุงเทพ Bangkok ก") == ("กร", "รง", "งเ", "เท", "ทพ", "bangkok", "ก")  # its vowel mark folded away
    m = Matcher([("กรุงเทพ", "bangkok"), ("เทสลา", "tesla"), ("北京", "beijing")])
    assert m.find("เมืองหลวงคือกรุงเทพมหานคร ไม่ใช่北京") == {"bangkok", "beijing"}


def test_a_word_with_vowel_signs_stays_one_word_as_bm25_folds_them_away():
    assert words("भारत की राजधानी नई दिल्ली") == ("भरत", "क", "रजधन", "नई", "दलल")
    assert words("Ἀθῆναι, São Paulo, أدى") == ("αθηναι", ",", "sao", "paulo", ",", "ادى")
    m = Matcher([("नई दिल्ली", "delhi")])
    assert m.find("भारत की राजधानी नई दिल्ली है।") == {"delhi"}


def test_the_longest_name_wins_where_names_overlap():
    m = Matcher([("Bank of England", "boe"), ("England", "england"), ("Bank", "bank")])
    assert m.find("The Bank of England sits in England.") == {"boe", "england"}


def test_a_name_claimed_by_two_entities_goes_to_the_smaller_id():
    m = Matcher([("Sao Paulo", "são paulo"), ("São Paulo", "sao paulo")])
    assert m.find("São Paulo") == {"sao paulo"}


def test_tens_of_thousands_of_names_build_and_match():
    names = [(f"Entity number {i}", f"e{i}") for i in range(50_000)]
    m = Matcher(names)
    assert m.find("we met entity number 49999 and Entity Number 7.") == {"e49999", "e7"}


@given(st.lists(st.sampled_from("abc"), max_size=12), st.lists(st.sampled_from("abc"), min_size=1, max_size=4))
def test_position_is_the_first_place_a_name_occurs(tokens, name):
    places = [i for i in range(len(tokens) - len(name) + 1) if tokens[i : i + len(name)] == name]
    assert position(tokens, name) == (places[0] if places else None)
    assert position(tuple(tokens), tuple(name)) == (places[0] if places else None)
