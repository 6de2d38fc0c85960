-- Stage terms (pipelines.terms): BM25 postings of every chunk and the words of every document, stored so
-- that a query reads only the rows of its own words (sql/query.sql, lexical_*), never the whole corpus.

-- name: stale
-- The scratch relation terms_stale_chunks: the chunks whose postings are out of date: gone, or their
-- document's scope changed; with $full (first run or a change of version) every chunk that has postings.
create or replace temp table terms_stale_chunks as
select l.chunk_id
from chunk_lengths l
left join chunks c using (chunk_id)
left join documents d on d.doc_id = c.doc_id
where $full or c.chunk_id is null or d.scope is distinct from l.scope;

-- name: stale_documents
-- The scratch relation terms_stale_documents: the documents whose word list is out of date: gone, scope
-- changed, or a chunk of theirs stale (terms_stale_chunks) or new (no postings yet); with $full every
-- document with a word list.
create or replace temp table terms_stale_documents as
select distinct doc_id
from (
    select w.doc_id
    from document_words w
    left join documents d using (doc_id)
    where $full or d.doc_id is null or d.scope is distinct from w.scope
    union all
    select doc_id from chunk_lengths where chunk_id in (select chunk_id from terms_stale_chunks)
    union all
    select c.doc_id from chunks c anti join chunk_lengths l using (chunk_id)
);

-- name: removed
-- The scratch relation terms_removed: the postings of the stale chunks, about to go, with their impact (none
-- with $full: every word's best postings are made again then).
create or replace temp table terms_removed as
select term, chunk_id, impact
from chunk_terms
where not $full and chunk_id in (select chunk_id from terms_stale_chunks);

-- name: delete_terms
-- Forget the postings of the stale chunks (terms_stale_chunks).
delete from chunk_terms
where chunk_id in (select chunk_id from terms_stale_chunks);

-- name: delete_lengths
-- Forget the lengths of the stale chunks (terms_stale_chunks); returns how many went.
delete from chunk_lengths
where chunk_id in (select chunk_id from terms_stale_chunks)
returning chunk_id;

-- name: terms_next_table
-- The scratch relation chunk_terms_next, empty: each chunk without postings (new, changed, or stale above) with
-- its terms and how often it uses each, in the same order (pipelines.terms.chunk_terms fills it).
create or replace temp table chunk_terms_next (chunk_id varchar, terms varchar[], tfs integer[]);

-- name: terms_next
-- The scratch relation terms_next: the postings of chunk_terms_next, a row a term of a chunk.
create or replace temp table terms_next as
select unnest(terms) as term, chunk_id, unnest(tfs) as tf
from chunk_terms_next;

-- name: todo_texts
-- The text of each chunk without postings (new, changed, or stale above).
select c.chunk_id, c.text
from chunks c
anti join chunk_lengths l using (chunk_id);

-- name: shard_texts
-- The scratch relation shard_input (pipelines.shards): each chunk without postings, keyed by its id, as `todo_texts`.
create or replace temp table shard_input as
select c.chunk_id as shard_key, 0 as seq, c.chunk_id, c.text
from chunks c
anti join chunk_lengths l using (chunk_id);

-- name: insert_lengths
-- The BM25 length of each chunk without postings (0 for a chunk of stop words only), with its document
-- and the document's scope; returns how many were written.
insert into chunk_lengths
select c.chunk_id, c.doc_id, d.scope, coalesce(sum(t.tf), 0)::integer
from chunks c
join documents d using (doc_id)
left join terms_next t using (chunk_id)
where c.chunk_id not in (select chunk_id from chunk_lengths)
group by all
order by c.chunk_id
returning chunk_id;

-- name: postings_next
-- The new postings (terms_next) into the scratch relation postings_next, with their chunk's length and scope
-- (chunk_lengths) and their impact: the BM25 term-frequency factor (k1 = 1.2, b = 0.75) at the reference
-- length $length, in hundredths.
create or replace temp table postings_next as
select t.term, t.chunk_id, t.tf, l.n_terms, l.scope,
       round(100 * t.tf * 2.2 / (t.tf + 1.2 * (0.25 + 0.75 * l.n_terms / $length)))::smallint as impact
from terms_next t
join chunk_lengths l using (chunk_id);

-- name: insert_terms
-- The new postings, in order of term and impact descending, so that a query reads a word's best postings in
-- few blocks.
insert into chunk_terms
select term, chunk_id, tf, n_terms, scope, impact
from postings_next
order by term, impact desc;

-- name: best_touched
-- The scratch relation best_touched: each word this run's postings touched (terms_removed, postings_next; none
-- with $full), with how its chunk count moves (delta), whether its best postings stay as stored (`counted`: the
-- stored row leaves some postings out, and every posting added or removed is below its cutoff, so that the
-- same postings are still its best), and how many postings its stored row and the new postings hold: what
-- best_next reads for it.
create or replace temp table best_touched as
with changes as (
    select term, impact, 1 as change from postings_next where not $full
    union all
    select term, impact, -1 from terms_removed
)
select c.term, sum(c.change)::integer as delta,
       coalesce(any_value(b.n_postings) < any_value(b.df) and count(*) filter (where c.impact >= b.cutoff) = 0,
                false) as counted,
       count(*) filter (where c.change > 0) + coalesce(any_value(b.n_postings), 0) as held
from changes c
left join term_postings b using (term)
group by c.term;

-- name: best_counted
-- The words whose best postings stay as stored (best_touched.counted) only count their chunks again.
update term_postings t
set df = t.df + b.delta
from best_touched b
where b.counted and b.term = t.term;

-- name: best_next_parts
-- The first word of each part of the words best_next makes (best_touched, the words whose best postings change),
-- in order: each part holds about $batch postings of their stored rows and of the new ones (a word's all in one
-- part), so that a part reads only the blocks of term_postings that hold its words (stored in order of term).
with running as (
    select term, sum(held) over (order by term) as reached
    from best_touched
    where not counted
)
select min(term) as first
from running
group by (reached - 1) // $batch
order by first;

-- name: best_next_table
-- The scratch relation best_next, empty: best_next fills it a part of the touched words at a time.
create or replace temp table best_next (term varchar, df integer, exact boolean,
                                        postings struct(chunk_id varchar, tf integer, n_terms integer, scope varchar,
                                                        impact smallint)[]);

-- name: best_next
-- Into best_next, for each word of best_touched whose best postings change, from $first up to $next (null: the
-- last), its chunk count and best postings as best_insert would make them, from its stored best postings less
-- those removed and with those added, without reading chunk_terms: exact (`exact`) for a word whose stored list
-- held all its postings (n_postings = df), or that still holds $limit postings at or above its stored cutoff (the
-- lowest impact it kept: every posting above it is in the list); the others' rows are made by best_insert.
-- Each word's list is merged and sorted as a list, in its row: no posting becomes a row of its own.
insert into best_next
with touched as (
    select term
    from best_touched
    where not counted and term >= $first and ($next::varchar is null or term < $next)
),
removed as (
    select term, list(chunk_id) as gone, count(*) as n
    from terms_removed
    where term in (select term from touched)
    group by term
),
added as (
    select term, count(*) as n,
           list({'chunk_id': chunk_id, 'tf': tf, 'n_terms': n_terms, 'scope': scope, 'impact': impact}) as postings
    from postings_next
    where term in (select term from touched)
    group by term
),
stored as (  -- the range's rows, read from its own blocks
    select term, df, postings, df = n_postings as complete, cutoff
    from term_postings
    where term >= $first and ($next::varchar is null or term < $next)
),
merged as (
    select t.term, coalesce(o.df, 0) - coalesce(r.n, 0) + coalesce(a.n, 0) as df,
           coalesce(o.complete, true) as complete,
           list_concat(
               list_filter(coalesce(o.postings, []), p -> r.gone is null or not list_contains(r.gone, p.chunk_id)),
               list_filter(coalesce(a.postings, []), p -> coalesce(o.complete, true) or p.impact >= o.cutoff)
           ) as candidates
    from touched t
    left join stored o on o.term = t.term
    left join removed r on r.term = t.term
    left join added a on a.term = t.term
),
ranked as (  -- highest impact first, then by chunk id
    select term, df, complete, len(candidates) as held,
           list_select(candidates, list_grade_up(list_transform(candidates,
                                                                p -> {'rank': -p.impact, 'chunk_id': p.chunk_id})))
               as ranked
    from merged
),
cut as (  -- the impact at which $limit postings are reached (ties kept), or the lowest
    select *, ranked[least(held, $limit)].impact as cutoff
    from ranked
)
select term, df::integer, complete or held >= $limit as exact, list_filter(ranked, p -> p.impact >= cutoff)
from cut
where df > 0;

-- name: best_delete
-- Forget the best postings of the words this run changed (best_touched less those counted: those best_next made,
-- and those no chunk holds any more; with $full, of every word).
delete from term_postings
where $full or term in (select term from best_touched where not counted);

-- name: best_merge
-- The rows of best_next made exactly, in order of word.
insert into term_postings
select term, df, postings, postings[len(postings)].impact, len(postings)
from best_next
where exact
order by term;

-- name: best_parts
-- The first word of each part of the words best_insert makes (with $full, every word; else those best_next
-- could not), in order: each part holds about $batch of their postings (a word's all in one part), so that a
-- part reads only the blocks of chunk_terms that hold its words (stored in order of term).
with counts as (
    select term, count(*) as n
    from chunk_terms
    where $full or term in (select term from best_next where not exact)
    group by term
),
running as (
    select term, sum(n) over (order by term) as reached
    from counts
)
select min(term) as first
from running
group by (reached - 1) // $batch
order by first;

-- name: best_insert
-- The best postings of the words best_next could not make (with $full, of every word) from $first up to $next
-- (null: the last), from chunk_terms: down to the highest impact at which $limit postings are reached, ties
-- kept (all of them for a word fewer chunks hold), highest impact first, then by chunk id; with the word's chunk
-- count. As query.lexical_postings keeps them for a caller who may read every chunk. Each list is sorted as a
-- list (list_grade_up), which costs far less than an ordered aggregate or a window, and cut at its $limit-th.
insert into term_postings
with postings as (
    select term, count(*)::integer as df,
           list({'chunk_id': chunk_id, 'tf': tf, 'n_terms': n_terms, 'scope': scope, 'impact': impact}) as postings
    from chunk_terms
    where ($full or term in (select term from best_next where not exact))
      and term >= $first and ($next::varchar is null or term < $next)
    group by term
),
ranked as (  -- highest impact first, then by chunk id
    select term, df,
           list_select(postings, list_grade_up(list_transform(postings, p -> {'rank': -p.impact, 'chunk_id': p.chunk_id})))
               as ranked
    from postings
),
kept as (
    select term, df, list_filter(ranked, p -> p.impact >= ranked[least(df, $limit)].impact) as postings
    from ranked
)
select term, df, postings, postings[len(postings)].impact, len(postings)::integer
from kept
order by term;

-- name: new_postings
-- How many postings this run added (terms_next).
select count(*) from terms_next;

-- name: resort
-- Rewrite chunk_terms in its order, once reruns have appended enough postings out of it.
create or replace table chunk_terms as
select * from chunk_terms order by term, impact desc;

-- name: sizes
-- How many postings chunk_terms holds and how many chunks chunk_lengths.
select (select count(*) from chunk_terms), (select count(*) from chunk_lengths);

-- name: language_use
-- How many documents use each of the words $words (stems as document_words holds them), over every scope:
-- the stage's auto stemmer is the language whose marker words the most documents use.
select word, sum(n_documents)::integer
from word_documents
where word in (select unnest($words::varchar[]))
group by word;

-- name: document_texts
-- The text of every chunk of the documents whose word lists are made again (terms_stale_documents), by document.
select c.doc_id, d.scope, c.text
from chunks c
join documents d using (doc_id)
where c.doc_id in (select doc_id from terms_stale_documents)
order by c.doc_id, c.ord;

-- name: shard_documents
-- The scratch relation shard_input (pipelines.shards): the chunks' texts of `document_texts`, keyed by document, in
-- order within it.
create or replace temp table shard_input as
select c.doc_id as shard_key, c.ord as seq, c.doc_id, d.scope, c.text
from chunks c
join documents d using (doc_id)
where c.doc_id in (select doc_id from terms_stale_documents);

-- name: document_words_next
-- The scratch relation the new word lists are written to (pipelines.terms).
create or replace temp table document_words_next (doc_id varchar, scope varchar, words varchar[]);

-- name: word_changes
-- What the new word lists (document_words_next) change in word_documents against the stored lists of the
-- same documents (terms_stale_documents): +1 a document for each word a list gains, -1 for each it loses.
create or replace temp table word_changes as
select word, scope, sum(n)::integer as n
from (
    select unnest(words) as word, scope, 1 as n from document_words_next
    union all
    select unnest(words), scope, -1 from document_words where doc_id in (select doc_id from terms_stale_documents)
)
group by all
having sum(n) <> 0;

-- name: apply_word_changes
-- word_changes applied to word_documents: a word's count moves, a new word is added, one no document uses
-- any more goes.
merge into word_documents w
using word_changes c
on w.word = c.word and w.scope is not distinct from c.scope
when matched and w.n_documents + c.n = 0 then delete
when matched then update set n_documents = w.n_documents + c.n
when not matched then insert values (c.word, c.scope, c.n);

-- name: delete_document_words
-- Forget the stored word lists of the documents made again (terms_stale_documents).
delete from document_words where doc_id in (select doc_id from terms_stale_documents);

-- name: insert_document_words
-- The new word lists.
insert into document_words select doc_id, scope, words from document_words_next order by doc_id;
