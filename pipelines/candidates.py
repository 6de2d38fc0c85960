"""Entity candidates found in text alone (`candidates`), mode nlp's per-chunk word cases (`word_cases`,
`mid_sentence`) and mode spacy's extractor (`spacy_extractor`). The candidates are

proper-noun sequences (with inner connectors: "Bank of England", "Ministério da Saúde"), acronyms (with
stops too, "U.S.", ending a name at most: "Washington D.C."),
an acronym's expansion where the text defines it ("World Health Organization (WHO)"), and code
identifiers (snake_case, camelCase). A chunk's candidates depend on that chunk alone, so a change
elsewhere never changes them; which candidates become entities is decided corpus-wide, in SQL.

With them, each chunk records how it writes its words (`word_cases`): how often each is written in lower
case, capitalised in mid-sentence position, and capitalised elsewhere (a sentence's, heading's or list
item's first word), and which of its candidates it writes in mid-sentence (`mid_sentence`). Summed over
the corpus (sql/mentions_nlp.sql, decisions) that tells a name, which the text capitalises wherever it stands, from
a common word capitalised by its place ("Fix", "Note", "Can", "Segundo", "Keeping America").
"""

import re
from collections.abc import Callable

from acervo.pipelines.names import entity_id
from acervo.pipelines.stopwords import COMMON

VERSION = "cases-4"  # version of what candidates and word_cases find: a change extracts every chunk again
WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")  # a word as word_cases counts it: letters, inner hyphens
CODE_SPAN = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)  # code is no prose: its case says nothing
MIN_WORD = 2  # shorter words are not counted
CAP = r"[A-ZÀ-ÖØ-Þ]\w*(?:-\w+)*(?:['’]\w+)?"  # inner hyphens join words, a dash ("Asia--and") does not
CONNECTORS = "of|the|de|da|do|das|dos|del|della|di|du|des|von|van|der|den|la|le"  # not "and": it joins two names
INITIALS = r"(?:[A-ZÀ-ÖØ-Þ]\.){2,}"  # "U.S.", "U.N.", "D.C.": a name's last word, as a sentence may end after it
NAME = re.compile(rf"(?<![\w'’])(?:{INITIALS}|{CAP}(?:[ \t]+(?:(?:{CONNECTORS})[ \t]+)*(?!{INITIALS}){CAP})*"
                  rf"(?:[ \t]+{INITIALS})?)")  # never across a line break
LONG = rf"(?<![\w'’]){CAP}(?:[ \t]+(?:(?:{CONNECTORS})[ \t]+)*{CAP})+"
DEFINED = re.compile(rf"({LONG})[ \t]*\([ \t]*([A-Z][A-Z0-9&]{{1,9}})[ \t]*\)")
CODE = re.compile(r"(?<![\w.])(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[a-z0-9]*[A-Z][A-Za-z0-9]*)(?![\w])")
POSSESSIVE = re.compile(r"['’]s?$")
MAX_WORDS = 6  # a candidate of more words is a heading or a sentence, not a name


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


def mid_sentence(text: str) -> list[str]:
    """The candidates of `text` (as `candidates` finds them) that it writes at least once in mid-sentence
    position (after a word in lower case, a digit, a comma or a semicolon), in order of appearance."""
    found: dict[str, None] = {}
    for m in NAME.finditer(text):
        cleaned = clean_name(m.group(0))
        if cleaned is None:
            continue
        start = m.start() + m.group(0).index(cleaned.split()[0])
        line = text.rfind("\n", 0, start) + 1
        if not text[line:start].lstrip().startswith("#") and _after_word(text[line:start]):
            found.setdefault(cleaned)
    return list(found)


def _after_word(before: str) -> bool:
    """Whether a word preceded on its line by `before` stands in mid-sentence: after a word that starts
    in lower case or a digit, or after a comma or semicolon, an opening parenthesis between them ("the
    Sistema Acadêmico (Siscad)"); not at a line's, sentence's or item's start."""
    before = before.rstrip(" \t")
    if before.endswith(("(", "[")):
        before = before[:-1].rstrip(" \t")
    if not before:
        return False
    last = before[-1]
    if last in ",;":
        return True
    if not last.isalnum():
        return False
    start = len(before) - 1
    while start > 0 and (before[start - 1].isalnum() or before[start - 1] in "-'’"):
        start -= 1
    first = before[start]
    return first.islower() or first.isdigit()


def word_cases(text: str) -> list[tuple[str, int, int, int]]:
    """(word, lower, mid, other) for each word of `text` outside code, folded as entity ids are: how often
    the text writes it in lower case, capitalised in mid-sentence position, and capitalised anywhere else
    (a line's or sentence's first word, a Markdown heading); sorted by word. Only `text` is read."""
    counts: dict[str, list[int]] = {}
    prose = CODE_SPAN.sub(lambda m: "\n" * m.group(0).count("\n") or " ", text)
    for line in prose.split("\n"):
        heading = line.lstrip().startswith("#")
        for m in WORD.finditer(line):
            word = m.group(0)
            if len(word) < MIN_WORD:
                continue
            slot = counts.setdefault(entity_id(word), [0, 0, 0])
            if word[0].islower():
                slot[0] += 1
            elif not heading and _after_word(line[: m.start()]):
                slot[1] += 1
            else:
                slot[2] += 1
    return sorted((word, *slot) for word, slot in counts.items())


NUMERIC_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})


def spacy_extractor(model: str) -> Callable[[list[str]], list[tuple[list[str], list[tuple[str, str]]]]]:
    """Mode spacy: what `candidates` gives, for many texts at once, from an installed spaCy
    pipeline (a package name or a folder): its named entities (numbers and dates left out) and, when it
    parses, its multi-word noun phrases; acronym definitions come from the text as in mode nlp. spaCy is
    imported only here."""
    try:
        import spacy
    except ImportError as err:
        raise ValueError("mentions mode 'spacy' needs spaCy: pip install 'acervo[spacy]' and a pipeline") from err
    try:
        pipeline = spacy.load(model)
    except OSError as err:
        raise ValueError(f"spaCy pipeline {model!r} is not installed or is no pipeline folder: {err}") from err

    def extract(texts: list[str]) -> list[tuple[list[str], list[tuple[str, str]]]]:
        found = []
        for doc in pipeline.pipe(texts):
            spans = [e for e in doc.ents if e.label_ not in NUMERIC_LABELS]
            if doc.has_annotation("DEP"):
                spans += [c for c in doc.noun_chunks if sum(1 for t in c if not t.is_stop and t.is_alpha) > 1]
            spans.sort(key=lambda s: (s.start_char, -s.end_char))
            names = [c for s in spans if (c := clean_name(" ".join(s.text.split())))]
            found.append((names, [(a, c) for long, a in DEFINED.findall(doc.text) if (c := clean_name(long))]))
        return found

    return extract
