"""Query: the seed entities of a question, found by name (labels and aliases, case- and accent-insensitive),
by the best BM25 chunks' entities, by names those chunks store, or by meaning (entity vectors).

A calibrated floor keeps noise out: a name that is a single stop word or a token of one or two
characters seeds only where the question writes it as an acronym, in capitals ("the WHO", "the US", "AI"),
so an off-topic question yields no seeds instead of false positives.
"""

import unicodedata
from dataclasses import dataclass, field, replace

from acervo.pipelines.candidates import NAME, clean_name
from acervo.pipelines.db import Connection, sql
from acervo.pipelines.layout import BOILERPLATE_DOCUMENTS
from acervo.pipelines.matcher import Matcher
from acervo.pipelines.names import WORD, fold, position, words
from acervo.pipelines.query.khop import Adjacency, listed
from acervo.pipelines.query.scoring import COMMON_SHARE, LEXICAL_SEED_CHUNKS, MAX_VECTOR_SEEDS, MAX_WORD_SEEDS
from acervo.pipelines.query.words import Words, content_words, stem
from acervo.pipelines.settings import EdgeSetting
from acervo.pipelines.stopwords import COMMON, STOP_WORDS

Hit = tuple[str, str, str, int, float]  # a BM25 match: chunk_id, doc_id, text, n_tokens, score


@dataclass(frozen=True)
class Seed:
    """An indexed entity the question names."""

    entity_id: str
    label: str
    n_chunks: int
    capitalised: bool = field(default=False, compare=False)  # the question writes it with a capital past its start


SEPARATOR = "\x1f"  # joins a name's tokens in entity_aliases.words, as the mentions stage stores them
LOOKUP_KEYS = 4096  # most keys a join passes to the scan of the table it probes, so that it reads them by index
MAX_NAME_TOKENS = 64  # longest name, in tokens, that a question's words are looked up as (a longer one never seeds)


class SeedFinder:
    """Finds indexed entities named in questions: each question's word n-grams are looked up in the index
    (entity_aliases.words); a caller with scopes holds the names it may see instead."""

    def __init__(self, con: Connection, *, capitals: bool = False, scopes: list[str] | None = None,
                 mode: str = "", min_chunks: int = 1) -> None:
        """With `capitals` (an index of names found by their capitals, modes nlp and spacy), only a name the
        question writes with a capital or a digit seeds, or one of an entity the corpus seldom writes in lower
        case and that is no single capitalised word (`lowercase`: "mkdocs" names MkDocs, "banco central"
        Banco Central; "water" never names Water). With `scopes`, only the entities a caller with those scopes
        may see, labelled and counted as the text it may read shows them (query.scope_names, by the index's
        mentions `mode`; in modes nlp and spacy, those in at least `min_chunks` readable chunks), loaded once:
        `entities` holds them."""
        self.con = con
        self.capitals = capitals
        con.execute(sql("query.lookups"), {"keys": LOOKUP_KEYS})
        self.entities: dict[str, Seed] = {}
        self.lowercase: set[str] = set()
        self.matcher: Matcher | None = None
        if scopes is not None:
            rows = con.execute(sql("query.scope_names"), {"scopes": scopes, "mode": mode,
                                                          "min_chunks": min_chunks}).fetchall()
            self.entities = {eid: Seed(eid, label, n) for _, eid, label, n in rows}
            self.lowercase = {eid for (eid,) in con.execute(sql("query.scope_lowercase")).fetchall()}
            self.matcher = Matcher([(alias, eid) for alias, eid, _, _ in rows if usable(words(alias))])

    def find(self, question: str) -> list[Seed]:
        """The entities named in `question`, rarest first (fewer chunks = more specific), then by id.

        In a question that capitalises names (a capital after its first word), a name written all in
        lower case is a common phrase ("the place of birth of"), not a name, and does not seed, unless its
        entity is one the corpus seldom writes in lower case (`lowercase`). A name below the floor (`specific`)
        seeds only where the question writes it in capitals and is not itself written all in capitals.
        """
        folded = words(question)
        written = WORD.findall(unicodedata.normalize("NFC", question))
        aligned = len(written) == len(folded)
        cased = aligned and (self.capitals or any(w[:1].isupper() for w in written[1:]))
        acronyms_written = aligned and not shouted(question)  # a word in capitals may then be an acronym
        matcher, entities, lowercase = self._names(folded)
        found: dict[str, bool] = {}
        for start, length, eid in matcher.spans(folded):
            capital = aligned and any(w[:1].isupper() or w[:1].isdigit() for w in written[start : start + length])
            if ((specific(folded[start : start + length]) or acronyms_written and written[start].isupper())
                    and (not cased or eid in lowercase or capital)):
                found[eid] = found.get(eid, False) or capital and start > 0
        return sorted((replace(entities[eid], capitalised=found[eid]) for eid in found),
                      key=lambda s: (s.n_chunks, s.entity_id))

    def _names(self, folded: tuple[str, ...]) -> tuple[Matcher, dict[str, Seed], set[str]]:
        """A matcher of the usable names among the word n-grams of `folded`, their entities and those of them
        a lower-case question names: the scoped caller's own, or what the index finds for the n-grams
        (query.seed_names)."""
        if self.matcher is not None:
            return self.matcher, self.entities, self.lowercase
        grams = sorted({SEPARATOR.join(folded[i:j]) for i in range(len(folded))
                        for j in range(i + 1, min(i + MAX_NAME_TOKENS, len(folded)) + 1)})
        rows = self.con.execute(sql("query.seed_names"), {"grams": listed(grams)}).fetchall()
        seedable = [(name, eid) for name, eid, *_ in rows if usable(tuple(name.split(SEPARATOR)))]
        return (Matcher(seedable, spell=lambda name: tuple(name.split(SEPARATOR))),
                {eid: Seed(eid, label, n) for _, eid, label, n, _ in rows}, {eid for _, eid, *_, low in rows if low})


def specific(tokens: tuple[str, ...]) -> bool:
    """Whether a name of these folded `tokens` is specific enough to seed: not a single stop word or a token
    of one or two characters (the floor)."""
    return not (len(tokens) == 1 and (len(tokens[0]) <= 2 or tokens[0] in STOP_WORDS))


def shouted(text: str) -> bool:
    """Whether `text` is written all in capitals: then a word's capitals say nothing of it being an acronym."""
    return text.upper() == text


def usable(tokens: tuple[str, ...]) -> bool:
    """Whether a name may seed at all: above the floor, or a single word of two or more letters that a question
    may write as an acronym ("WHO", "US")."""
    return specific(tokens) or (len(tokens) == 1 and len(tokens[0]) >= 2 and tokens[0].isalpha())


@dataclass(frozen=True)
class View:
    """What a caller with some scopes may see of the graph: the entities a readable chunk mentions (with
    their labels and readable mention counts) and the edges their readable chunks make."""

    seeds: SeedFinder
    graph: Adjacency
    boilerplate: frozenset[str] = frozenset()  # the sentence keys many readable documents write (layout.sentence_key)


def view(con: Connection, scopes: list[str], *, checked: bool, mode: str, edges: EdgeSetting,
         min_chunks: int = 1) -> View:
    """What `scopes` may see, as an index of only the documents they may read would hold it (`edges`: what the
    index's edges were made with; `min_chunks`: its nlp_min_chunks)."""
    seeds = SeedFinder(con, capitals=checked, scopes=scopes, mode=mode, min_chunks=min_chunks)
    con.execute(sql("edges.ranked"))
    rows = con.execute(sql("query.scope_edges"), {"scopes": scopes, "ids": listed(sorted(seeds.entities)),
                                                  "min_weight": edges.min_weight, "top_k": edges.top_k}).fetchall()
    graph: Adjacency = {}
    for src, dst, weight, rank in rows:
        graph.setdefault(src, []).append((dst, weight, rank))
    common = con.execute(sql("query.scope_boilerplate"),
                         {"scopes": scopes, "documents": BOILERPLATE_DOCUMENTS}).fetchall()
    return View(seeds, graph, frozenset(k for (k,) in common))


def named(finder: SeedFinder, question: str, words_of: Words, *, checked: bool) -> list[Seed]:
    """The entities `question` names; in an index of found names (`checked`), not a common phrase found
    as a name (`common`: "Can I")."""
    found = finder.find(question)
    if not checked:
        return found
    return [s for s in found if not common(s, words_of)]


def covered(question: str, hits: list[Hit], words_of: Words) -> list[str]:
    """The best LEXICAL_SEED_CHUNKS `hits` that pass the lexical floor (`Words.matches`)."""
    return [cid for cid, _, text, _, _ in hits[:LEXICAL_SEED_CHUNKS] if words_of.matches(question, text)]


def by_words(con: Connection, question: str, hits: list[Hit], view_of: View | None, words_of: Words) -> list[Seed]:
    """Entities of the best BM25 `hits` that pass the lexical floor (`Words.matches`: enough of the question's
    information, `words_of`' IDF of its content words, which an off-topic question's chance matches on
    everyday words do not reach), best match first; with a view, those it sees, as it labels and counts them."""
    chunks = covered(question, hits, words_of)
    if not chunks:
        return []
    rows = con.execute(sql("query.chunk_entities"), {"ids": listed(chunks)}).fetchall()
    if view_of is not None:
        seen = view_of.seeds.entities
        rows = [(cid, eid, seen[eid].label, seen[eid].n_chunks) for cid, eid, _, _ in rows if eid in seen]
    order = {cid: i for i, cid in enumerate(chunks)}
    rows.sort(key=lambda r: (order[r[0]], r[3], r[1]))
    found = list(dict.fromkeys(Seed(eid, label, n) for _, eid, label, n in rows))
    return found[:MAX_WORD_SEEDS]


def names(question: str) -> list[tuple[tuple[str, ...], ...]]:
    """The names `question` gives, each as its spellings to try in order (folded tokens): its capitalised word
    sequences, cleaned as the mentions stage cleans candidates. A capital on the question's first word may be
    the sentence's: a sequence it opens is tried whole, then without it ("Are Marufabad" -> Marufabad), and
    a lone first word is no name."""
    found: list[tuple[tuple[str, ...], ...]] = []
    for match in NAME.finditer(question):
        span = match.group(0)
        if match.start() == 0:
            rest = span.partition(" ")[2]
            spellings = [span, rest] if rest else []
        else:
            spellings = [span]
        tried = tuple(dict.fromkeys(t for t in map(_tokens, spellings) if t))
        if tried and tried not in found:
            found.append(tried)
    return found


def _tokens(span: str) -> tuple[str, ...]:
    """A span's folded tokens, cleaned as a candidate; () for none or only common words."""
    name = clean_name(span) if span else None
    tokens = words(name) if name else ()
    return () if all(t in COMMON for t in tokens) else tokens


def by_name(question: str, hits: list[Hit], words_of: Words) -> list[str]:
    """The names `question` gives (`names`) that one of the best BM25 `hits` writes, its words together and in
    order, as the question spells them (its first spelling written); not a name made only of words at least
    COMMON_SHARE of the documents use. A name the text uses, in any mode, though no entity holds it (seen too
    rarely for the graph, or no title)."""
    asked = names(question)
    texts = [words(hit[2]) for hit in hits] if asked else []
    spelled = WORD.findall(unicodedata.normalize("NFC", question))
    folded = [fold(w) for w in spelled]
    found = []
    for spellings in asked:
        for tokens in spellings:
            if all(words_of.share(stem(w)) >= COMMON_SHARE for w in tokens if w.isalnum()):
                continue
            if any(position(text, tokens) is not None for text in texts):
                at = position(folded, tokens)
                found.append(" ".join(spelled[at : at + len(tokens)]) if at is not None else " ".join(tokens))
                break
    capitals = acronyms(spelled)
    written = [set(WORD.findall(unicodedata.normalize("NFC", hit[2]))) for hit in hits] if capitals else []
    return found + [a for a in capitals if any(a in text for text in written)]


def acronyms(spelled: list[str]) -> list[str]:
    """The words a question (its words as written) spells in capitals that are common words in lower case
    ("WHO", "US", "IT"), so `names` skips them; none in a question written all in capitals. Such an acronym
    counts as a name only where the text writes it in capitals too (`by_name`)."""
    if shouted(" ".join(spelled)):
        return []
    return list(dict.fromkeys(w for w in spelled if len(w) > 1 and w.isalpha() and w.isupper() and fold(w) in COMMON))


def by_vector(con: Connection, vector: list[float], scopes: list[str] | None, *, floor: float,
              view_of: View | None) -> list[tuple[Seed, float]]:
    """The entities closest in meaning to a question's `vector` (cosine of the vectors, at least `floor`), with
    their similarity. A scoped caller (`view_of`) gets only entities it sees, as it labels and counts them."""
    rows = con.execute(sql("query.vector_seeds"), {"vector": vector, "floor": floor, "scopes": scopes,
                                                   "limit": MAX_VECTOR_SEEDS}).fetchall()
    if view_of is not None:
        seen = view_of.seeds.entities
        return [(seen[eid], round(similarity, 3)) for eid, _, _, similarity in rows if eid in seen]
    return [(Seed(eid, label, n), round(similarity, 3)) for eid, label, n, similarity in rows]


def common(seed: Seed, words_of: Words) -> bool:
    """Whether `seed` is a common phrase found as a name ("Can I" at the start of a sentence): every word of
    its label is in at least COMMON_SHARE of the documents, yet it is found as a name in fewer chunks than
    COMMON_SHARE of the documents that use all its words (at most, those that use its rarest word)."""
    stems = [stem(w) for w in words(seed.label) if w.isalnum()]
    if not stems or any(words_of.share(w) < COMMON_SHARE for w in stems):
        return False
    return seed.n_chunks < COMMON_SHARE * min(words_of.documents.get(w, 0) for w in stems)


def supported(question: str, label: str, hits: list[Hit]) -> bool:
    """Whether one of the best LEXICAL_SEED_CHUNKS BM25 `hits` holds the words of `label` and another content
    word of `question` too: the text uses the name in the question's context."""
    said = {stem(w) for w in words(label)}
    others = {stem(w) for w in content_words(question)} - said
    for _, _, text, _, _ in hits[:LEXICAL_SEED_CHUNKS]:
        held = {stem(w) for w in words(text)}
        if said <= held and others & held:
            return True
    return False


def lower_case(question: str, seed: Seed) -> bool:
    """Whether `question` writes neither the name it found `seed` by nor a word of its label with a capital or a
    digit (its first word, capitalised as any sentence's is, does not count): then the name may be a common word
    ("safe", "run"), and it seeds only when the best matching text uses it with another of the question's words
    (`supported`). A name in a script without capitals (Chinese, Japanese) gives no such sign, and is taken as
    written."""
    label = seed.label
    if seed.capitalised or not any(c.isupper() or c.islower() for c in label):
        return False
    wanted = set(words(label))
    written = WORD.findall(unicodedata.normalize("NFC", question))
    return not any(fold(w) in wanted and (w[:1].isupper() or w[:1].isdigit()) for w in written[1:])
