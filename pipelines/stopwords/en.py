"""English stop words: the common words a sentence may start with, the words a question's content leaves out
and the closed-class words of questions; with the fts extension's own list (what BM25 leaves out of a chunk)."""

from functools import cache

import duckdb

from acervo.pipelines.db import EXTENSION, sql

# common words a capitalised word at a sentence's start may be (case-folded, accents kept): no candidate name
COMMON = frozenset("""
a an the this that these those it its i we you he she they our my your his her their us me them
and or but if so yet nor for of on in at by to from with as into over after before since until while
when where why how what which who whom whose there here then now today tonight tomorrow yesterday
all any each every no not none some many much more most few other such only also just even still
again ever never always already however therefore thus moreover indeed meanwhile instead perhaps
let thank thanks yes dear mr mrs ms dr sir madam ladies gentlemen god
i'm i've i'll i'd it's that's there's here's what's we're we've we'll you're you've don't can't won't let's
like yeah oh okay ok well right really actually one two three awesome great sure hey hi um uh wow cool
""".split())
STOP_WORDS = frozenset(  # words a question's content words leave out (folded)
    "a an and are as at be by for from in is it no of on or the to with what which who where when how".split())
FUNCTION_WORDS = frozenset(  # closed-class words (folded): how a question asks, not what
    "i me my we us our you your he him his she her they them their its this that these those there here "
    "am was were be been being do does did doing done have has had having can could should would shall will "
    "may might must not nor but if then than so also just only very too any some all each both either "
    "more most much many own same such about into onto over under among between without against whether whom "
    "whose why".split())


@cache
def stop_words() -> tuple[str, ...]:
    """The fts extension's English stop words (the words BM25 leaves out of a chunk)."""
    with duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}) as con:
        con.load_extension(str(EXTENSION))
        con.execute(sql("stopwords.stop_words_source"))
        con.execute(sql("stopwords.stop_words_index"))
        return tuple(w for (w,) in con.execute(sql("stopwords.stop_words")).fetchall())
