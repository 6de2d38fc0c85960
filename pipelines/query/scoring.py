"""Query: every weight and threshold that decides what a context holds and in which order, and the scores
they make. A unit's score ranks it for the budget (pipelines.query.budget): higher enters first."""

import math

SCORE_DIGITS = 6  # decimals a unit's score keeps, so that scores compare alike on every platform
DIRECT_SLACK = 0.8  # documents go in whole when they fill at most this share of the budget
DOCUMENT_STEPS = 1000  # whole documents score 1 less their place over this, in the order the context cites them
LEXICAL_LIMIT = 30  # the best BM25 chunks a question reads
LEXICAL_SEED_CHUNKS = 2  # the best BM25 chunks whose entities seed a question that names none
PROFILE_RANK = 4  # the search profile is the best BM25 score over the score at this place
MAX_WORD_SEEDS = 3  # most entities a question's words seed (through the best BM25 chunks)
MAX_VECTOR_SEEDS = 3  # most entities a question's meaning seeds (through the entity vectors)
VECTOR_FLOOR = 0.6  # least cosine for a vector seed; models differ: calibrate it on off-topic questions (docs/query.md)
MEANING_LIMIT = 30  # the chunks closest in meaning a question reads (chunk vectors)
MEANING_WEIGHT = 0.5  # a chunk's share of meaning beside its BM25 share, both scaled to 1 at the best
FLOOR_QUANTILE = 0.98  # the packaged model's floor: this quantile of the unrelated questions' closest cosines
COLLECTION_MARGIN = 0.02  # cosine: a question about the collection is at most this much closer to its closest chunk
REACH_QUANTILE = 0.82  # the lexical floor for a name: this quantile of the unrelated questions' BM25 reach
COMMON_SHARE = 0.5  # share of documents using a name's words, and of those its mentions, for a common phrase
SEED_TRUSTED = 1.0  # a seed's score in an index of given, gazetteer or title names
SEED_BASE, SEED_BM25 = 0.5, 0.5  # a seed's score in an index of found names: base, BM25 of its evidence
RELATION_WEIGHT = 0.8  # a neighbour's score at depth 1, divided by its depth, times its fit
LINK_BASE, LINK_BM25, LINK_SENTENCE = 0.3, 0.3, 0.4  # a neighbour's fit: base, BM25 of its evidence, linking sentence
LINK_PROXIMITY = 0.2  # a linking sentence's bonus when the question's words stand next to the name (less, farther)
LINK_NAMED = 0.2  # a linking sentence's worth for naming the neighbour at all, before the question's words in it
EVIDENCE_WEIGHT = 0.9  # an evidence chunk's score at a seed, divided by 1 + its entity's depth, times its fit
EVIDENCE_BASE, EVIDENCE_BM25 = 0.4, 0.6  # an evidence chunk's fit: base, its BM25 (a seed's in a trusted index: 1)
LATER_EVIDENCE_SHARE = 0.5  # an entity's second evidence chunk scores this share of what its first would
PLACE_STEP = 1e-6  # subtracted per place, so that units of equal score keep the order they were read in
LEXICAL_CHUNK_SHARE = 0.3  # a BM25 chunk beside the graph's evidence scores this share of its BM25 (found names: 1)
REPORT_BASE, REPORT_MATCH, REPORT_WEIGHT = 0.5, 0.4, 0.1  # a report: base, question words it holds, its weight
MIXED_REPORT_LEAD = 1.0  # added to report scores in a mixed context, above every local unit's (at most 1)
REPORT_CHUNK_SHARE = 0.5  # a report's evidence chunk scores this share of its report's score
REPORT_TERMS = 8  # distinctive terms shown in a report
REPORT_TERM_LETTERS = 4  # a term is a word of at least this many letters, not a stop word
GRAPH_SLICE, CHUNK_SLICE = 0.5, 0.5  # mode sliced: budget shares of entities, relations and reports; of chunks


def seed(match: float, checked: bool) -> float:
    """A seed's answer: trusted, or in an index of found names (`checked`) as far as its evidence matches."""
    return round(SEED_BASE + SEED_BM25 * match if checked else SEED_TRUSTED, SCORE_DIGITS)


def relation(depth: int, match: float, link: float | None) -> float:
    """A neighbour with its edge: weaker the farther it is, stronger the better its evidence (`match`, BM25 of
    what the question asks beyond its names) fits the question, and when a sentence about the seed names it
    (`link`: how well that sentence fits; None when none names it)."""
    said = 0.0 if link is None else LINK_NAMED + link
    return round(RELATION_WEIGHT / depth * (LINK_BASE + LINK_BM25 * match + LINK_SENTENCE * said), SCORE_DIGITS)


def evidence(depth: int, match: float, *, first: bool, place: int, checked: bool) -> float:
    """An entity's evidence chunk, read at `place`: weaker the farther its entity is, and when it is not the
    entity's `first`; a seed's first evidence (its own document's, where it has one) is trusted whole unless the
    index's names are found (`checked`), and any other fits as far as it matches the question."""
    fit = 1.0 if depth == 0 and first and not checked else EVIDENCE_BASE + EVIDENCE_BM25 * match
    return EVIDENCE_WEIGHT / (1 + depth) * fit * (1.0 if first else LATER_EVIDENCE_SHARE) - place * PLACE_STEP


def lexical(bm25: float, checked: bool) -> float:
    """A BM25 chunk outside the graph's evidence: the equal of evidence in an index of found names."""
    return (1.0 if checked else LEXICAL_CHUNK_SHARE) * bm25


def report(match: float, weight: int, heaviest: int) -> float:
    """A community report: the share of the question's words it holds (`match`), then its weight."""
    return round(REPORT_BASE + REPORT_MATCH * match + REPORT_WEIGHT * weight / heaviest, SCORE_DIGITS)


def report_chunk(score: float, place: int) -> float:
    """A chunk a report's key evidence cites, at its `place` among them."""
    return round(score * REPORT_CHUNK_SHARE - place * PLACE_STEP, SCORE_DIGITS)


def report_hit(score: float, share: float, place: int) -> float:
    """A global question's best chunk under the report that covers it (`score`): the report's score times the
    chunk's coverage over the report's best chunk's (`share`), so that a report's best chunk follows it before
    the next report, and weaker ones after."""
    return round(score * share - place * PLACE_STEP, SCORE_DIGITS)


def mixed(score: float) -> float:
    """A report's score in a mixed context: above every local unit's."""
    return round(score + MIXED_REPORT_LEAD, SCORE_DIGITS)


def document(place: int) -> float:
    """A whole document at `place` in the order the context cites them."""
    return round(1.0 - place / DOCUMENT_STEPS, SCORE_DIGITS)


# Ranking in an index of found names (pipelines.query.evidence): a chunk scores its BM25 (the best hit's = 1)
# plus, for each name the question gives that the chunk writes verbatim, the name's share of the question's
# names (by IDF) times its specificity squared, times NAME_WEIGHT, and LEAD_WEIGHT more when the chunk opens its
# document with the name; a chunk that defines an entity such a chunk names (a bridge) scores its parent's
# score times BRIDGE_BASE + BRIDGE_LINK times the linking sentence's link (pipelines.query.local.links, at most
# 1 + LINK_PROXIMITY). Then every score is divided by the best.
NAME_WEIGHT = 1.0  # a question's name written verbatim in a chunk (all its names: at most this)
LEAD_WEIGHT = 1.0  # more when the chunk opens its document with the name: the document is about it
LEAD_START = 2  # words a document may open with before a name's first word and still open with the name ("The")
NAME_GAP = 2  # words an opening may hold between two of a name's words (a middle name) and still open with it
SPECIFICITY_POWER = 2  # a name's IDF over the most a name can have (in one chunk), to this power
MAX_NAME_CHUNKS = 100  # a name whose words are all in more chunks says little about which one answers
BRIDGE_PARENTS = 3  # best chunks holding a question's name whose entities are followed to their own chunks
BRIDGE_BASE, BRIDGE_LINK = 0.3, 0.6  # a bridge: share of its parent's score, and more by its linking sentence


def specificity(df: int, n: int) -> float:
    """How well a name found in `df` of `n` chunks picks them out: its IDF over a name in one chunk's, to
    SPECIFICITY_POWER (1: in one chunk; toward 0 as it is in more)."""
    return (idf(df, n) / idf(1, n)) ** SPECIFICITY_POWER if n > 1 else 1.0


def idf(df: int, n: int) -> float:
    """A name's inverse chunk frequency: ln(1 + n / df)."""
    return math.log(1 + n / df)


def named(bm25: float, names: list[tuple[float, float, bool]]) -> float:
    """A chunk's score from its BM25 (scaled) and the question's names it writes: (share of the question's
    names, specificity, opens its document with it) each."""
    bonus = sum(share * spec * (NAME_WEIGHT + (LEAD_WEIGHT if lead else 0.0)) for share, spec, lead in names)
    return round(bm25 + bonus, SCORE_DIGITS)


def bridge(parent: float, link: float) -> float:
    """A bridge chunk: its parent's score, shared by how well the linking sentence fits the question."""
    return round(parent * (BRIDGE_BASE + BRIDGE_LINK * link), SCORE_DIGITS)


def fused(bm25: float, meaning: float) -> float:
    """A chunk's first-hop score from its BM25 and its closeness in meaning, each scaled to 1 at the best."""
    return round(bm25 + MEANING_WEIGHT * meaning, SCORE_DIGITS)
