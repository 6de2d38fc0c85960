"""Text utilities the stages and the query side share: entity names (stable ids, accent- and case-folded
matching keys, the multi-pattern matcher), sentence and paragraph spans, entity candidates found in text
alone, the choice of an entity's short answer, and the line formats of community reports."""

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"  # Han and kana: no spaces
# a word, or a symbol; each Han or kana character is a word of its own, so that a name written without spaces
# between words ("北京大学") matches as a run of them
WORD = re.compile(rf"[{UNSPACED}]|[^\W{UNSPACED}]+|[^\w\s]")
UNSPACED_CHAR = re.compile(f"[{UNSPACED}]")
MARKS = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MAX_NAME_CHARS = 300  # longest label an entity may have
PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)|\n")
WORD_BEFORE = re.compile(r"(\w+)\W*$")
NEXT_CHAR = re.compile(r"\s*(\S?)")  # the first character after white space, without copying the rest
ABBREVIATIONS = frozenset(
    "mr mrs ms dr drs prof st mt ft jr sr sra srta dra vs etc inc ltd co corp no nos fig figs ca cf al approx "
    "gen col lt sgt capt rev gov sen rep av pág pag vol ed eds dept univ est".split())
CAP = r"[A-ZÀ-ÖØ-Þ]\w*(?:-\w+)*(?:['’]\w+)?"  # inner hyphens join words, a dash ("Asia--and") does not
CONNECTORS = "of|the|de|da|do|das|dos|del|della|di|du|des|von|van|der|den|la|le"  # not "and": it joins two names
NAME = re.compile(rf"(?<![\w'’]){CAP}(?:[ \t]+(?:(?:{CONNECTORS})[ \t]+)*{CAP})*")  # never across a line break
LONG = rf"(?<![\w'’]){CAP}(?:[ \t]+(?:(?:{CONNECTORS})[ \t]+)*{CAP})+"
DEFINED = re.compile(rf"({LONG})[ \t]*\([ \t]*([A-Z][A-Z0-9&]{{1,9}})[ \t]*\)")
CODE = re.compile(r"(?<![\w.])(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[a-z0-9]*[A-Z][A-Za-z0-9]*)(?![\w])")
POSSESSIVE = re.compile(r"['’]s?$")
MAX_WORDS = 6  # a candidate of more words is a heading or a sentence, not a name
MAX_CANDIDATE_CHUNKS = 16  # chunks an entity's short answer is chosen among, best evidence first
MIN_WORDS = 4  # a shorter sentence is a poor short answer (a caption, a fragment)
COPULAS = frozenset([
    "is", "was", "are", "were", "refers", "means", "denotes", "defines",
    "é", "foi", "são", "era", "eram", "designa", "significa", "define", "definem", "consiste", "consistem",
])
COPULA_WINDOW = 8  # tokens after a name within which a defining verb makes the sentence a definition
MEMBERS = "Central members: "
EVIDENCE = "Key evidence:"
ANSWERS = "Members:"
COMMON = frozenset("""
a an the this that these those it its i we you he she they our my your his her their us me them
and or but if so yet nor for of on in at by to from with as into over after before since until while
when where why how what which who whom whose there here then now today tonight tomorrow yesterday
all any each every no not none some many much more most few other such only also just even still
again ever never always already however therefore thus moreover indeed meanwhile instead perhaps
let thank thanks yes dear mr mrs ms dr sir madam ladies gentlemen god
i'm i've i'll i'd it's that's there's here's what's we're we've we'll you're you've don't can't won't let's
like yeah oh okay ok well right really actually one two three awesome great sure hey hi um uh wow cool
o os um uma uns umas este esta estes estas esse essa isso isto aquele aquela eu nós tu ele ela eles
elas nosso nossa meu minha seu sua e ou mas se que quando onde como porque porém também já ainda
hoje agora então depois antes durante para por com sem sobre entre até desde no na nos nas num numa
em ao aos à às do da dos das senhor senhora sr sra
""".split())


DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")  # a title's trailing "(film)", "(writer)"


def entity_id(label: str) -> str:
    """The stable id of a label: Unicode NFC, case-folded, whitespace collapsed."""
    if label.isascii():  # the same result without normalising: ASCII has no decompositions
        return " ".join(label.lower().split())
    folded = unicodedata.normalize("NFC", label).casefold()
    return unicodedata.normalize("NFC", " ".join(folded.split()))


def short_form(title: str) -> str:
    """A title without its trailing disambiguation: "Friedrich Wolf (writer)" -> "Friedrich Wolf", the name a
    text writes."""
    return DISAMBIGUATION.sub("", title)


def display(label: str) -> str:
    """A label as shown: NFC with whitespace collapsed, case kept."""
    return " ".join(unicodedata.normalize("NFC", label).split())


def problem(label: str) -> str | None:
    """Why `label` cannot name an entity, or None when it can."""
    if CONTROL.search(label):
        return "contains a control character (NUL included)"
    if not label.strip():
        return "is empty"
    if len(label) > MAX_NAME_CHARS:
        return f"is longer than {MAX_NAME_CHARS} characters"
    if not words(label):
        return "has no matchable character"
    return None


def blank(text: str) -> bool:
    """Whether `text` shows nothing: only white space and invisible format characters (zero-width space, word
    joiner, byte order mark, soft hyphen)."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)


def fold(text: str) -> str:
    """Text as matching sees it: compatibility-decomposed, without accents, case-folded."""
    if text.isascii():  # the same result, several times faster: ASCII has no decompositions or marks
        return text.lower()
    return MARKS.sub("", unicodedata.normalize("NFKD", text)).casefold()


def words(text: str) -> tuple[str, ...]:
    """The folded word and symbol tokens of `text`; names match on whole tokens only."""
    return tuple(WORD.findall(fold(text)))


STEM_LETTERS = 5  # words are compared by their first letters, so that inflections meet (trend, trends)


def stem(word: str) -> str:
    """How the question router compares words: their first STEM_LETTERS letters."""
    return word[:STEM_LETTERS]


def word_stems(text: str) -> set[str]:
    """The distinct stems of the words of `text` (pipelines.terms stores them per document)."""
    return {w[:STEM_LETTERS] for w in WORD.findall(fold(text))}


class Matcher:
    """Finds every known name in a text at once: leftmost, longest, on token boundaries."""

    def __init__(self, names: Iterable[tuple[str, str]], *,
                 spell: Callable[[str], tuple[str, ...]] = words) -> None:
        """Index (name, entity_id) pairs; a name claimed by two entities goes to the smaller id.

        `spell` turns a name into its tokens (`words`, or a caller's cache of it).
        """
        self.names: dict[tuple[str, ...], str] = {}
        for name, eid in sorted(names, key=lambda pair: (pair[1], pair[0])):
            self.names.setdefault(spell(name), eid)
        self.names.pop((), None)
        lengths: dict[str, set[int]] = {}
        for key in self.names:
            lengths.setdefault(key[0], set()).add(len(key))
        self.lengths = {first: sorted(ls, reverse=True) for first, ls in lengths.items()}

    def find(self, text: str) -> set[str]:
        """Ids of the entities whose names occur in `text`."""
        return {eid for _, _, eid in self.spans(words(text))}

    def spans(self, tokens: tuple[str, ...]) -> list[tuple[int, int, str]]:
        """(first token, token count, entity id) of every name found in folded `tokens`."""
        found = []
        i, n = 0, len(tokens)
        while i < n:
            step = 1
            for length in self.lengths.get(tokens[i], ()):
                eid = self.names.get(tokens[i : i + length])
                if eid is not None:
                    found.append((i, length, eid))
                    step = length
                    break
            i += step
        return found


def sentences(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each sentence of `text` in order, white space trimmed; lazy, so a caller may stop early.

    A sentence ends at a line break, or at . ! ? … before white space, unless the next word starts in
    lower case or with a digit ("d. 851", "e.g. this"), or the period closes an initial or a common
    abbreviation ("J. R. R.", "Dr.", "Sra.").
    """
    return _between(text, ((m.end(), m.end()) for m in END.finditer(text) if _ends_sentence(text, m)))


def _ends_sentence(text: str, match: re.Match[str]) -> bool:
    """Whether the END `match` closes a sentence (see `sentences`)."""
    if match.group() == "\n":
        return True
    following = NEXT_CHAR.match(text, match.end()).group(1)
    before = WORD_BEFORE.search(text, max(0, match.start() - 40), match.start())
    word = before.group(1).casefold() if before else ""
    return not (following.islower() or following.isdigit() or len(word) == 1 or word in ABBREVIATIONS)


def paragraph_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each paragraph of `text` (blocks between blank lines) in order, white space trimmed."""
    return _between(text, ((m.start(), m.end()) for m in PARAGRAPH.finditer(text)))


def _between(text: str, cuts: Iterable[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The non-empty, trimmed spans of `text` around `cuts` ((where a piece ends, where the next begins))."""
    start = 0
    for end, following in cuts:
        a, b = _trimmed(text, start, end)
        if a < b:
            yield a, b
        start = following
    a, b = _trimmed(text, start, len(text))
    if a < b:
        yield a, b


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """`start`, `end` moved inwards past white space."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _common(word: str) -> bool:
    """Whether a capitalised word is just a common word at the start of a sentence (acronyms are not)."""
    return word.casefold().replace("’", "'").strip("'") in COMMON and not (len(word) > 1 and word.isupper())


def clean_name(name: str) -> str | None:
    """A candidate without leading common words and possessive endings, or None when nothing is left."""
    words = name.split()
    while words and _common(words[0]):
        words = words[1:]
    while words and words[-1].casefold() in CONNECTORS.split("|"):
        words = words[:-1]
    if not words:
        return None
    words[-1] = POSSESSIVE.sub("", words[-1]) or words[-1]
    if len(words) > MAX_WORDS or (len(words) > 1 and all(w.isupper() for w in words)):
        return None  # headings and shouted lines, not names
    if len(words) == 1 and len(words[0]) < 2:
        return None
    return " ".join(words)


def candidates(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The entity candidates of `text` in order of appearance, and the (acronym, expansion) pairs it defines."""
    found = [c for m in NAME.finditer(text) if (c := clean_name(m.group(0)))]
    found += CODE.findall(text)
    defined = [(acronym, cleaned) for long, acronym in DEFINED.findall(text) if (cleaned := clean_name(long))]
    return found, defined


@dataclass(frozen=True)
class Candidate:
    """A chunk that mentions the entity, with what ranks it."""

    chunk_id: str
    content_hash: str
    ord: int
    title: str
    n_entities: int


def position(tokens: Sequence[str], name: Sequence[str]) -> int | None:
    """Index of the first occurrence of `name` in `tokens`, or None."""
    n = len(name)
    for i in range(len(tokens) - n + 1):
        if tokens[i] == name[0] and tuple(tokens[i : i + n]) == tuple(name):
            return i
    return None


def _defining(sentence: str, tokens: Sequence[str], at: int) -> bool:
    """Whether a defining verb follows the name that starts at token `at` ("X is", "X é", "X refers").

    Copulas are matched with accents kept ("é" is not "e", which means "and" in Portuguese).
    """
    cased = WORD.findall(sentence.casefold())
    window = (cased if len(cased) == len(tokens) else tokens)[at : at + COPULA_WINDOW]
    return any(t in COPULAS for t in window)


def choose(names_of: Sequence[str], candidates: Sequence[Candidate], texts: dict[str, str], *,
           max_chars: int, split: Callable[[str], Iterable[tuple[int, int]]] = sentences,
           spell: Callable[[str], tuple[str, ...]] = words) -> tuple[str, str]:
    """(sentence, chunk_id): the best "what is X" sentence among the candidates' chunks.

    Preference, in order: a sentence that names X; one where a defining verb follows the name;
    of reasonable length (the one chosen is `clipped` to `max_chars`); from a chunk titled X, then one shared
    with fewer entities; earlier;
    shorter; then chunk id and offset, so ties never depend on input order. The lead sentence of a
    document titled X counts as naming and defining X (it may use a shorter name).

    `split` and `spell` (sentence spans, tokens) may be a caller's caches: a chunk is a candidate of
    every entity it mentions.
    """
    keys = [spell(n) for n in names_of]
    keys = [k for k in keys if k]
    ranked = sorted(candidates, key=lambda c: (spell(c.title) not in keys, c.n_entities, c.chunk_id))
    best: tuple | None = None
    for chunk_rank, cand in enumerate(ranked[:MAX_CANDIDATE_CHUNKS]):
        text = texts[cand.chunk_id]
        lead = cand.ord == 0 and spell(cand.title) in keys
        for place, (start, end) in enumerate(split(text)):
            sentence = text[start:end]
            tokens = spell(sentence)
            where = [p for k in keys if (p := position(tokens, k)) is not None]
            named = bool(where) or (lead and place == 0)
            defining = (lead and place == 0) or (bool(where) and _defining(sentence, tokens, min(where)))
            odd_length = len(sentence) > max_chars or len(tokens) < MIN_WORDS
            score = (not named, not defining, odd_length, chunk_rank, place, len(sentence), cand.chunk_id, start)
            if best is None or score < best[0]:
                best = (score, sentence, cand.chunk_id)
            if score[:3] == (False, False, False):  # later sentences rank after this one: it is the best
                return sentence, cand.chunk_id
    assert best is not None, "an entity always has a chunk with text"
    return clipped(best[1], max_chars), best[2]


def clipped(sentence: str, max_chars: int) -> str:
    """`sentence`, or when longer than `max_chars` its opening up to the last clause mark (, ; :) in its second
    half, else the last word that ends within it: still a verbatim quote, and short (a text that never closes
    a sentence, such as one written without capitals or stops, is one long "sentence")."""
    if len(sentence) <= max_chars:
        return sentence
    head = sentence[: max_chars + 1]
    clause = max(head.rfind(mark) for mark in ",;:")
    cut = clause if clause >= max_chars // 2 else head.rfind(" ")
    return sentence[: cut if cut > 0 else max_chars].rstrip(" ,;:") or sentence[:max_chars]


def line(label: str, answer: str, ref: str) -> str:
    """One report line: a member, its short answer, and the chunk that supports it."""
    return f"- {label}: {' '.join(answer.split())} [{ref}]"


def evidence_line(sentence: str, ref: str) -> str:
    """One key evidence line: a sentence of a supporting chunk, cited."""
    return f"- {' '.join(sentence.split())} [{ref}]"
