-- The query side's statements (pipelines/query), in the order a question runs them: opening the index,
-- seeding and routing, BM25, the local neighbourhood, community reports, whole documents, evaluation.
-- Lists of ids read through from_json come as one JSON array (pipelines.query.khop.listed): a list parameter
-- costs far more to bind, per value.

-- name: settings
-- Every setting the index was built with (index_state), read once when it is opened.
select key, value
from index_state

-- name: built_with
-- The settings of the index's last run (index_runs.settings, JSON); none for an index built without a ledger.
select settings
from index_runs
where status = 'ok'
order by started_at desc, run_id desc
limit 1;

-- name: vector_count
-- How many entity vectors the index holds.
select count(*)
from entity_vectors

-- name: lookups
-- Let a join hand up to $keys keys of its small side to the scan of the table it probes, which then reads
-- only their rows where an index holds that column (a question's word n-grams are a few hundred).
set dynamic_or_filter_threshold = $keys

-- name: pinned_memory
-- The bytes DuckDB holds for the connection besides cached table blocks: above all the lookup-index (ART) nodes
-- its questions loaded, which it keeps until it closes, and its temporary tables. A reader's memory limit is set
-- above them (pipelines.query.context.Index._bound), so that what it may evict, the cached blocks, is bounded.
select coalesce(sum(memory_usage_bytes), 0)::bigint
from duckdb_memory()
where tag <> 'BASE_TABLE'

-- name: seed_names
-- The names among $grams (a question's word n-grams, folded tokens joined by U+001F) that find an indexed
-- entity (entity_aliases.words), with the entity's label and mention count, and whether a question names
-- it even when it writes the name in lower case (modes nlp and spacy: the corpus seldom writes the name's
-- word in lower case, candidate_decisions.lowercase).
-- Materialised, the names are looked up with no other filter on their scan, which an index then answers.
with named as materialized (
    select words, entity_id
    from entity_aliases
    where words in (select unnest(from_json($grams, '["VARCHAR"]')))
)
select n.words, n.entity_id, e.label, e.n_chunks,
       coalesce(d.kept and d.lowercase and d.reason = 'entity', false) as lowercase
from named n
join entities e using (entity_id)
left join candidate_decisions d using (entity_id)
order by n.entity_id, n.words

-- name: scope_names
-- What a caller with $scopes may see of the entities, as an index of only the documents it may read
-- would hold them: each name (alias) of an entity that a readable chunk mentions and that has a name
-- from a readable source, with the entity's label (its heaviest such name, then the smallest) and the
-- readable chunks that mention it. A name's source depends on the mentions mode $mode: the gazetteer
-- (the index's own settings, readable by all); the documents that list it (given); the documents named
-- with it (titles: a document's title, or with its id when documents share the title, counted over all of
-- them: mentions_titles.document_names (sql/mentions_titles.sql)); the chunks whose candidates spell it (nlp, spacy). In titles mode an
-- entity only an unreadable document is named after stays hidden, even where readable text uses its name.
-- In modes nlp and spacy an entity needs $min_chunks readable chunks (the index's nlp_min_chunks), as a name seen
-- in fewer is no entity in an index of those documents alone.
with readable as (
    select c.chunk_id, d.doc_id, d.title
    from chunks c
    join documents d using (doc_id)
    where d.scope is null or list_contains($scopes::varchar[], d.scope)
),
named as (  -- mode titles: each document's name, as mentions_titles.document_names (sql/mentions_titles.sql) gives it
    select doc_id,
           case when count(*) over (partition by title) > 1 then title || ' (' || doc_id || ')' else title end
               as name
    from documents
    where $mode = 'titles'
),
seen as (
    select m.entity_id, count(*)::integer as n_chunks
    from mentions m
    join readable r using (chunk_id)
    group by m.entity_id
),
sourced as (
    select entity_id, name, weight
    from names
    where $mode = 'gazetteer'
    union all
    select entity_id, label, count(*)::integer
    from document_entities
    where $mode = 'given' and doc_id in (select doc_id from readable)
    group by all
    union all
    select distinct entity_id, title, 1
    from title_names
    where $mode = 'titles' and title in (select name from named where doc_id in (select doc_id from readable))
    union all
    select n.entity_id, n.name, count(distinct x.chunk_id) filter (where u.c.entity_id = n.entity_id)::integer
    from chunk_candidates x, unnest(x.names) as u(c)
    join names n on n.name = u.c.name
    where $mode in ('nlp', 'spacy') and x.chunk_id in (select chunk_id from readable)
    group by all
),
labels as (
    select entity_id, min_by(name, {'weight': -weight, 'name': name}) as label
    from sourced
    group by entity_id
)
select a.alias, a.entity_id, l.label, s.n_chunks
from entity_aliases a
join labels l using (entity_id)
join seen s using (entity_id)
where $mode not in ('nlp', 'spacy') or s.n_chunks >= $min_chunks
order by a.entity_id, a.alias

-- name: scope_lowercase
-- Modes nlp and spacy: the entities a question names even when it writes their name in lower case: the
-- corpus seldom writes the name's word in lower case (candidate_decisions.lowercase).
select entity_id
from candidate_decisions
where kept and lowercase and reason = 'entity'
order by entity_id

-- name: scope_edges
-- The co-occurrence edges among the entities $ids as an index of only the documents $scopes may read
-- would hold them: the stage's own statement (edges.ranked, made in the connection first) over the readable
-- mentions, at least $min_weight, and only each src's $top_k strongest rows (null: all). In the order a walk
-- reads them.
with readable as (
    select m.entity_id, m.chunk_id, m.windows
    from mentions m
    join chunks c using (chunk_id)
    join documents d using (doc_id)
    where (d.scope is null or list_contains($scopes::varchar[], d.scope))
      and m.entity_id in (select unnest(from_json($ids, '["VARCHAR"]')))
)
select src, dst, weight, rank
from ranked_edges('readable', 'readable', $min_weight, $top_k)
order by src, rank

-- name: readable_documents
-- How many documents $scopes may read (null = any): the question router's word shares are over them.
select count(*)
from documents
where $scopes::varchar[] is null or scope is null or list_contains($scopes::varchar[], scope)

-- name: word_documents
-- How many of the documents $scopes may read use each of the words $words (router stems; a word no
-- readable document uses is left out).
select word, sum(n_documents)::integer
from word_documents
where word in (select unnest($words::varchar[]))
  and ($scopes::varchar[] is null or scope is null or list_contains($scopes::varchar[], scope))
group by word

-- name: lexical_corpus
-- BM25's corpus statistics over the chunks $scopes may read (null = any): how many, and their average length.
select count(*)::integer, coalesce(avg(n_terms), 0)
from chunk_lengths
where $scopes::varchar[] is null or scope is null or list_contains($scopes::varchar[], scope)

-- name: lexical_postings
-- Into the temporary table bm25_postings: every posting of the words $terms in a chunk $scopes may read
-- (null = any), with its BM25 weight as DuckDB's fts extension computes it (k1 = 1.2, b = 0.75; log: base 10)
-- over an index of the readable chunks alone: the word's readable chunk count (df, counted here), $n readable
-- chunks of average length $avgdl; and whether it is among the word's best (`kept`): read down to the highest
-- impact at which at least $limit readable postings are reached (all of them, for a word with fewer, or with
-- $limit null). The one read of chunk_terms a question makes: lexical_top sums these rows, and name_chunks finds
-- the chunks that hold a name's words in them.
-- Joined, the words reach the scan as one filter (query.lookups), not a list searched for each posting.
create or replace temp table bm25_postings as
with postings as materialized (
    select term, p.chunk_id, p.tf, p.n_terms, p.impact
    from chunk_terms p
    join (select unnest($terms::varchar[]) as term) using (term)
    where $scopes::varchar[] is null or p.scope is null or list_contains($scopes::varchar[], p.scope)
),
counts as (
    select term, impact, count(*) as n
    from postings
    group by term, impact
),
running as (
    select term, impact, sum(n) over (partition by term order by impact desc) as reached,
           sum(n) over (partition by term) as df
    from counts
),
cutoffs as (
    select term, any_value(df) as df, coalesce(max(impact) filter (where reached >= $limit), min(impact)) as cutoff
    from running
    group by term
)
select p.term, p.chunk_id, p.impact >= k.cutoff as kept,
       bm25_weight(k.df, $n, p.tf, p.n_terms, $avgdl) as weight
from postings p
join cutoffs k using (term)

-- name: lexical_stored
-- Whether term_postings holds the best postings of $limit a word (index_state term_postings), whether any
-- chunk has a scope (then a scoped caller's best postings are read from chunk_terms, as lexical_postings does),
-- and the stemmer the terms stage stemmed the chunks with (index_state terms_stemmer; porter for an index
-- whose terms stage has not run), which the query side stems questions and texts with.
select coalesce((select value from index_state where key = 'term_postings') = $limit::varchar, false),
       exists (select 1 from chunk_lengths where scope is not null),
       coalesce((select value from index_state where key = 'terms_stemmer'), 'porter')

-- name: lexical_best_terms
-- The words $terms that have postings, each with its chunk count (df) and whether its best postings
-- (term_postings, a row a word) are all of its postings (`complete`).
select term, df, df = len(postings) as complete
from term_postings
where term in (select unnest($terms::varchar[]))

-- name: lexical_best
-- Into the temporary table bm25_postings, as lexical_postings makes it for a caller who may read every chunk: the
-- best postings of the words $terms (term_postings), all kept, with their BM25 weight ($n chunks of average
-- length $avgdl). Postings below a word's best are read only when a name needs them (lexical_complete).
create or replace temp table bm25_postings as
with asked as materialized (
    select term, df, postings
    from term_postings
    where term in (select unnest($terms::varchar[]))
)
select t.term, p.chunk_id, true as kept,
       bm25_weight(t.df, $n, p.tf, p.n_terms, $avgdl) as weight
from asked t, unnest(t.postings) as u(p)

-- name: lexical_terms_read
-- Each word of bm25_postings (read whole from chunk_terms by lexical_postings) with its readable chunk count;
-- all its postings are there.
select term, count(*)::integer as df, true as complete
from bm25_postings
group by term

-- name: lexical_complete
-- Add to bm25_postings the postings of the words $terms below their best (those lexical_best left out), from
-- chunk_terms, not kept for ranking: a name's chunks are those that hold all its words. Only lexical_best
-- leaves a word incomplete, for a caller who may read every chunk.
insert into bm25_postings
select p.term, p.chunk_id, false, null
from chunk_terms p
join (select unnest($terms::varchar[]) as term) using (term)
anti join bm25_postings b on b.term = p.term and b.chunk_id = p.chunk_id

-- name: lexical_top
-- The $limit chunks that rank best by the BM25 score of their kept postings (bm25_postings: the last
-- question's), rounded to $digits decimals, then by chunk id, with their text.
select s.chunk_id, c.doc_id, c.text, c.n_tokens, s.score
from (select chunk_id, round(sum(weight), $digits) as score
      from bm25_postings
      where kept
      group by chunk_id
      order by score desc, chunk_id
      limit $limit) s
join chunks c using (chunk_id)
order by s.score desc, s.chunk_id

-- name: lexical_best_top
-- lexical_top for a caller who may read every chunk, from the best postings of the words $terms (term_postings,
-- as lexical_best reads them, $n chunks of average length $avgdl), without making bm25_postings: the $limit
-- chunks with the best BM25 score, rounded to $digits decimals, then by chunk id, with their text; and on each
-- row the same list of the words that have postings, as lexical_best_terms reads them (a word with postings
-- puts a chunk in the list: no row, no such word).
with asked as materialized (
    select term, df, postings
    from term_postings
    where term in (select unnest($terms::varchar[]))
),
scored as (
    select p.chunk_id, round(sum(bm25_weight(t.df, $n, p.tf, p.n_terms, $avgdl)), $digits) as score
    from asked t, unnest(t.postings) as u(p)
    group by p.chunk_id
    order by score desc, p.chunk_id
    limit $limit
),
words as (
    select list(struct_pack(term := term, df := df, complete := df = len(postings)) order by term) as words
    from asked
)
select s.chunk_id, c.doc_id, c.text, c.n_tokens, s.score, w.words
from scored s
join chunks c using (chunk_id)
cross join words w
order by s.score desc, s.chunk_id

-- name: lexical_best_tops
-- lexical_best_top for many questions in one statement, as the lexical floors' calibration asks them: $questions
-- is a list of term lists, one a question; each question's rows carry its place in $questions (from 1). One
-- question ranks faster by lexical_best_top, whose limit DuckDB keeps as a top-N.
with asked as materialized (
    select q.question, t.term, t.df, t.postings
    from (select unnest($questions::varchar[][]) as terms,
                 generate_subscripts($questions::varchar[][], 1) as question) q,
         unnest(q.terms) as w(term)
    join term_postings t on t.term = w.term
),
scored as (
    select t.question, p.chunk_id, round(sum(bm25_weight(t.df, $n, p.tf, p.n_terms, $avgdl)), $digits) as score
    from asked t, unnest(t.postings) as u(p)
    group by t.question, p.chunk_id
    qualify row_number() over (partition by t.question order by score desc, p.chunk_id) <= $limit
),
words as (
    select question,
           list(struct_pack(term := term, df := df, complete := df = len(postings)) order by term) as words
    from asked
    group by question
)
select s.chunk_id, c.doc_id, c.text, c.n_tokens, s.score, w.words, s.question
from scored s
join chunks c using (chunk_id)
join words w using (question)
order by s.question, s.score desc, s.chunk_id

-- name: lexical_tops
-- lexical_top for many questions in one statement, from bm25_postings made by lexical_postings for all their
-- words at once (a word's postings, weights and best ones do not depend on the other words asked): $questions is
-- a list of term lists, one a question; each question's $limit best chunks, its rows carrying its place in
-- $questions (from 1).
with asked as (
    select unnest($questions::varchar[][]) as terms, generate_subscripts($questions::varchar[][], 1) as question
),
scored as (
    select a.question, p.chunk_id, round(sum(p.weight), $digits) as score
    from asked a, unnest(a.terms) as w(term)
    join bm25_postings p on p.term = w.term
    where p.kept
    group by a.question, p.chunk_id
    qualify row_number() over (partition by a.question order by score desc, p.chunk_id) <= $limit
)
select s.chunk_id, c.doc_id, c.text, c.n_tokens, s.score, s.question
from scored s
join chunks c using (chunk_id)
order by s.question, s.score desc, s.chunk_id

-- name: chunk_entities
-- The entities the chunks $ids mention, with their labels and how many chunks mention them.
select m.chunk_id, m.entity_id, e.label, e.n_chunks
from mentions m
join entities e using (entity_id)
where m.chunk_id in (select unnest(from_json($ids, '["VARCHAR"]')))

-- name: vector_seeds
-- Vector seeds: the $limit entities whose vector ("label: short answer") is closest to the question's
-- $vector by cosine, at least $floor, most similar first (then by id). Only entities whose answer
-- cites a chunk the caller may read ($scopes: null = any), since the vector was made from that text.
select e.entity_id, e.label, e.n_chunks, list_cosine_similarity(v.vector, $vector::float[]) as similarity
from entity_vectors v
join entities e using (entity_id)
join entity_answers a using (entity_id)
join chunks c on c.chunk_id = a.evidence_ref
join documents d on d.doc_id = c.doc_id
where list_cosine_similarity(v.vector, $vector::float[]) >= $floor
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
order by similarity desc, e.entity_id
limit $limit

-- name: neighbours
-- The neighbours of the entities $ids, strongest first: one depth of a walk (pipelines.query.khop.walk, which
-- keeps each entity's cap strongest). The ids are the scan's only filter, which an index then answers.
select src, dst, weight, rank
from edges
where src in (select unnest(from_json($ids, '["VARCHAR"]')))
order by src, rank

-- name: khop
-- Entities within $hops hops of $seeds over `edges`, following only each entity's $cap strongest
-- neighbours (rank <= $cap; null = no cap). Breadth-first: every entity appears once, at its
-- smallest depth, with one provenance path (a list of entity ids, so any character is safe).
-- Path rule among equally short ones: the heavier last edge wins, then the smaller parent path
-- (lists compare element by element). USING KEY keeps one row per entity across iterations, and
-- `recurring.walk` (everything reached so far) stops revisits, so paths never explode.
with recursive walk (entity, depth, path, weight) using key (entity) as (
    select seed, 0, [seed], null::integer
    from (select distinct unnest($seeds::varchar[]) as seed)
    union
    select e.dst, w.depth + 1, list_append(w.path, e.dst), e.weight
    from walk w
    join edges e on e.src = w.entity
    where w.depth < $hops
      and ($cap::integer is null or e.rank <= $cap::integer)
      and e.dst not in (select entity from recurring.walk)
    qualify row_number() over (partition by e.dst order by e.weight desc, w.path) = 1
)
select entity, depth, path, weight
from walk
order by depth, entity

-- name: answers
-- Short answers of the entities $ids whose evidence chunk the caller may read ($scopes: null = any;
-- otherwise documents without scope or with one of these scopes).
select a.entity_id, e.label, a.answer, a.evidence_ref
from entity_answers a
join entities e using (entity_id)
join chunks c on c.chunk_id = a.evidence_ref
join documents d on d.doc_id = c.doc_id
where a.entity_id in (select unnest(from_json($ids, '["VARCHAR"]')))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
order by a.entity_id

-- name: entity_evidence
-- For a caller who may read every chunk: each entity of $ids with its label, short answer and the chunk that
-- answer quotes, once per chunk of its stored best evidence (entity_answers.evidence, best first) with that
-- chunk's text. One row per entity is read through the keys, whatever the corpus's size.
with asked as materialized (
    select entity_id, answer, evidence_ref, evidence
    from entity_answers
    where entity_id in (select unnest(from_json($ids, '["VARCHAR"]')))
),
ranked as (
    select entity_id, unnest(evidence) as chunk_id, generate_subscripts(evidence, 1) as place
    from asked
)
select a.entity_id, e.label, a.answer, a.evidence_ref, r.chunk_id, c.text
from asked a
join entities e using (entity_id)
join ranked r using (entity_id)
join chunks c on c.chunk_id = r.chunk_id
order by a.entity_id, r.place

-- name: chunks
-- The readable chunks ($scopes) that mention the entities $ids, best evidence first per entity: from the
-- document titled after it, then shared with fewer entities, then by chunk id (the order of the stored
-- entity_answers.evidence, which query.entity_evidence reads for a caller who may read every chunk); at most
-- $per_entity each, with what text.choose ranks a candidate by (content hash, place, title, entities sharing it).
-- $labels (null, or one per id): the labels a scoped caller knows the entities by, for "titled after it".
-- Ranked on the mentions and titles alone; only the chunks kept are read whole.
with asked as (
    select unnest(from_json($ids, '["VARCHAR"]')) as entity_id, unnest(from_json($labels, '["VARCHAR"]')) as label
),
mine as materialized (
    select entity_id, chunk_id
    from mentions
    where entity_id in (select entity_id from asked)
),
crowd as (
    select chunk_id, count(*) as n_entities
    from mentions
    where chunk_id in (select chunk_id from mine)
    group by chunk_id
),
ranked as (
    select m.entity_id, m.chunk_id, coalesce(a.label, e.label) as label, d.title,
           crowd.n_entities::integer as n_entities,
           row_number() over (partition by m.entity_id
                              order by lower(d.title) <> lower(coalesce(a.label, e.label)), crowd.n_entities,
                                       m.chunk_id) as place
    from mine m
    join asked a using (entity_id)
    join chunks c using (chunk_id)
    join documents d using (doc_id)
    join crowd using (chunk_id)
    join entities e on e.entity_id = m.entity_id
    where ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
)
select r.entity_id, r.chunk_id, r.label, c.text, c.content_hash, c.ord, r.title, r.n_entities
from ranked r
join chunks c using (chunk_id)
where r.place <= $per_entity
order by r.entity_id, r.place

-- name: aliases
-- Every name of the entities $ids (label included), in order.
select entity_id, alias
from entity_aliases
where entity_id in (select unnest(from_json($ids, '["VARCHAR"]')))
order by entity_id, alias

-- name: chunk_texts
-- The text of the readable chunks $ids ($scopes: null = any).
select c.chunk_id, c.text
from chunks c
join documents d using (doc_id)
where c.chunk_id in (select unnest(from_json($ids, '["VARCHAR"]')))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))

-- name: chunk_texts_unscoped
-- query.chunk_texts for a caller who may read every chunk: no join to the documents' scopes.
select chunk_id, text
from chunks
where chunk_id in (select unnest(from_json($ids, '["VARCHAR"]')))

-- name: communities_of
-- The level-0 communities of the entities $ids.
select distinct cm.community_id
from community_members cm
join communities c using (community_id)
where c.level = 0 and cm.entity_id in (select unnest($ids::varchar[]))
order by cm.community_id

-- name: covering_communities
-- The level-0 communities that the chunks $ids fall in: for each chunk, each entity it mentions, in how many
-- chunks, and that entity's community (what a global question's best chunks say about which reports cover it).
select m.chunk_id, m.entity_id, e.n_chunks, cm.community_id
from mentions m
join entities e using (entity_id)
join community_members cm using (entity_id)
join communities c using (community_id)
where c.level = 0 and m.chunk_id in (select unnest($ids::varchar[]))
order by m.chunk_id, m.entity_id, cm.community_id

-- name: reports
-- Community reports at $level (or the communities $ids when given) as readable lines: each line of
-- a report whose cited chunk the caller may read ($scopes), with the member's label for matching
-- against the question, the community's title and weight, the member and its answer (for a scoped
-- caller, who sees a line under its own label for the member), and the whole stored report (its
-- summary: central members and key evidence sentences, each citing a chunk).
select c.community_id, c.title, c.weight, l.text, l.evidence_ref, e.label, l.entity_id, a.answer, r.report
from communities c
join community_reports r using (community_id)
join report_lines l using (community_id)
join entities e on e.entity_id = l.entity_id
join entity_answers a on a.entity_id = l.entity_id
join chunks ch on ch.chunk_id = l.evidence_ref
join documents d on d.doc_id = ch.doc_id
where ((from_json($ids, '["VARCHAR"]') is null and c.level = $level) or list_contains(from_json($ids, '["VARCHAR"]'), c.community_id))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
order by c.community_id, l.ord

-- name: reports_unscoped
-- query.reports of the communities $ids for a caller who may read every chunk (no join to the chunks'
-- documents, whose scopes it need not check), with a null answer (only a scoped caller's lines are rewritten
-- from their answers). Each table is filtered by $ids as it is scanned, which the joins alone would not do.
select c.community_id, c.title, c.weight, l.text, l.evidence_ref, e.label, l.entity_id, null as answer, r.report
from communities c
join community_reports r using (community_id)
join report_lines l using (community_id)
join entities e on e.entity_id = l.entity_id
where list_contains(from_json($ids, '["VARCHAR"]'), c.community_id)
  and list_contains(from_json($ids, '["VARCHAR"]'), r.community_id)
  and list_contains(from_json($ids, '["VARCHAR"]'), l.community_id)
order by c.community_id, l.ord

-- name: heaviest_communities
-- The $limit heaviest communities at $level, then by id: those whose reports an overview reads for a caller
-- who may read every chunk, so that it costs the same whatever the number of communities.
select community_id
from communities
where level = $level
order by weight desc, community_id
limit $limit

-- name: documents
-- The readable documents ($scopes) $doc_ids, whole, with all their chunk ids in order (documents.chunk_ids), for
-- direct context: one row a document, read by its key. A chunk id names its document
-- (pipelines.chunks.document_of), so the chunks a context cites are not looked up first.
select doc_id, title, text, n_tokens, from_json(chunk_ids, '["VARCHAR"]') as chunk_ids
from documents
where doc_id in (select unnest($doc_ids::varchar[]))
  and ($scopes::varchar[] is null or scope is null or list_contains($scopes::varchar[], scope))
order by doc_id

-- name: chunk_documents
-- The document of every chunk, for evaluation: which documents a context cites.
select chunk_id, doc_id
from chunks

-- name: written
-- The written texts (rows with text) of $kind, 'report' (written_reports, by community id) or 'answer'
-- (written_answers, by entity id), for the ids $ids that the caller may read whole: every chunk the text was
-- written from (inputs) readable ($scopes: null = any); with the chunks it cites.
with asked as (
    select community_id as id, report as text, refs, inputs
    from written_reports
    where $kind = 'report' and report is not null
      and community_id in (select unnest(from_json($ids, '["VARCHAR"]')))
    union all
    select entity_id, answer, refs, inputs
    from written_answers
    where $kind = 'answer' and answer is not null
      and entity_id in (select unnest(from_json($ids, '["VARCHAR"]')))
),
hidden as (
    select distinct a.id
    from (select id, unnest(inputs) as chunk_id from asked) a
    left join chunks c using (chunk_id)
    left join documents d on d.doc_id = c.doc_id
    where $scopes::varchar[] is not null
      and (d.doc_id is null or (d.scope is not null and not list_contains($scopes::varchar[], d.scope)))
)
select id, text, refs
from asked
where id not in (select id from hidden)
order by id

-- name: name_chunks
-- The readable chunks that hold every BM25 term of $terms that has a posting (a name the question gives, as
-- pipelines.query.lexical splits it; a stop word has none), from the last question's postings (bm25_postings:
-- only chunks the caller may read), by chunk id; none when more than $most chunks hold them all (a name so
-- common says little about which one answers). The caller checks that the chunk writes the name's words in order.
with asked as (
    select distinct term
    from bm25_postings
    where list_contains($terms::varchar[], term)
),
holders as (
    select chunk_id
    from bm25_postings
    where term in (select term from asked)
    group by chunk_id
    having count(distinct term) = (select count(*) from asked)
)
select c.chunk_id, c.doc_id, c.ord, c.text
from chunks c
where c.chunk_id in (select chunk_id from holders)
  and (select count(*) from asked) > 0
  and (select count(*) from holders) <= $most
order by c.chunk_id

-- name: chunk_vectors
-- Every chunk vector with its document's scope, in chunk id order (a reader holds them as one matrix).
select v.chunk_id, d.scope, v.vector
from chunk_vectors v
join chunks c using (chunk_id)
join documents d using (doc_id)
order by v.chunk_id

-- name: chunk_rows
-- The chunks $ids with their document, text and size.
select chunk_id, doc_id, text, n_tokens
from chunks
where chunk_id in (select unnest($ids::varchar[]))

-- name: written_counts
-- How many written answers and written reports the index holds (with text or not).
select (select count(*) from written_answers), (select count(*) from written_reports)

-- name: chunk_vector_count
-- How many chunk vectors the index holds.
select count(*)
from chunk_vectors

-- name: scope_boilerplate
-- The sentence keys (pipelines.boilerplate.key) that at least $documents of the documents $scopes may read write:
-- the boilerplate an index of those documents alone would find. Such a key is written by at least as many
-- documents of the whole corpus, so it is among the corpus's own boilerplate (chunk_boilerplate, made with the same
-- $documents): only the chunks that hold some are read, not every chunk's sentences.
select sentence
from (select c.doc_id, unnest(b.sentences) as sentence
      from chunk_boilerplate b
      join chunks c using (chunk_id)
      join documents d using (doc_id)
      where d.scope is null or list_contains($scopes::varchar[], d.scope))
group by sentence
having count(distinct doc_id) >= $documents
order by sentence;
