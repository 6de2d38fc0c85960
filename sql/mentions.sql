-- Statements of the stage mentions shared by its modes (pipelines.mentions), in the order a run uses them.

-- name: dictionary_new
-- The scratch relation names_next, empty: it receives this run's dictionary.
create or replace temp table names_next (
    entity_id varchar not null, name varchar not null, weight integer not null,
    words varchar  -- folded tokens joined by U+001F
);

-- name: decisions_clear
-- Forget the candidate decisions, which modes nlp and spacy write again.
delete from candidate_decisions;

-- name: mention_expected
-- Into the scratch relation mention_expected: the chunks to check (every chunk with $full, otherwise
-- those the run's change log lists: a chunk's own inputs change only when its document is split
-- again), each with the hash of what its mentions depend on besides its text and the dictionary
-- ($mode, its candidate $extractor, the edge $window, and the document's title or given entities);
-- `dirty` when that differs from what its stored mentions were computed from, or with $rematch (they were
-- decided, or names tokenised, by another version of the stage: any chunk may match otherwise).
create or replace temp table mention_expected as
with checked as (
    select chunk_id, doc_id
    from chunks
    where $full or chunk_id in (select id from changed where kind = 'chunk')
),
given as (
    select doc_id, list(distinct entity_id order by entity_id) as entity_ids
    from document_entities
    where doc_id in (select doc_id from checked)
    group by doc_id
),
expected as (
    select c.chunk_id,
           sha256(to_json({'mode': $mode::varchar, 'extractor': $extractor::varchar, 'window': $window::varchar,
                           'title': case when $mode in ('titles', 'nlp', 'spacy') then d.title else '' end,
                           'given': case when $mode = 'given' then coalesce(g.entity_ids, []) else [] end}))
               as mention_hash
    from checked c
    join documents d using (doc_id)
    left join given g using (doc_id)
)
select e.chunk_id, e.mention_hash, $rematch or s.mention_hash is distinct from e.mention_hash as dirty
from expected e
left join chunk_state s using (chunk_id);

-- name: matched_dirty
-- Into the scratch relation mentions_matched, the chunks matched again in this run: first those whose mentions are
-- computed from other inputs than stored (mention_expected); returns how many.
create or replace temp table mentions_matched as select distinct chunk_id from mention_expected where dirty;
select count(*) from mentions_matched;

-- name: chunk_count
-- How many chunks the index has.
select count(*) from chunks;

-- name: names_changed
-- Into the scratch relation names_changed, the (entity_id, name) pairs whose weight differs between the stored
-- dictionary (names) and this run's (names_next); `moved` when the pair entered or left it (only those can match
-- differently), `entered` when it is new. Returns how many moved.
create or replace temp table names_changed as
select coalesce(x.entity_id, p.entity_id) as entity_id, coalesce(x.name, p.name) as name,
       x.weight is null or p.weight is null as moved, p.weight is null as entered
from names_next x
full join names p on p.entity_id = x.entity_id and p.name = x.name
where x.weight is distinct from p.weight;
select count(*) from names_changed where moved;

-- name: names_moved
-- The pairs of names_changed that entered or left the dictionary, and whether each entered.
select entity_id, name, entered from names_changed where moved order by all;

-- name: chunk_folded_delete
-- Forget the folded text of chunks that are gone.
delete from chunk_folded where chunk_id not in (select chunk_id from chunks);

-- name: chunk_folded_clear
-- Forget every chunk's folded text (another version of the stage folded it): chunks_unfolded then lists every chunk.
delete from chunk_folded;

-- name: chunks_unfolded
-- Chunks whose folded text is not stored yet: any chunk with $full, else only those this run wrote
-- (the change log), which spares reading every chunk's text.
select c.chunk_id, c.text
from chunks c
anti join chunk_folded f using (chunk_id)
where $full or c.chunk_id in (select id from changed where kind = 'chunk')
order by c.chunk_id;

-- name: renamed
-- The scratch relation mentions_renamed: the entities ($ids, a JSON array) whose names can match differently in this
-- run: in modes nlp and spacy those that entered or left the dictionary, in gazetteer and titles those one of
-- whose names left it.
create or replace temp table mentions_renamed as select unnest(from_json($ids, '["VARCHAR"]')) as entity_id;

-- name: chunks_naming
-- Modes gazetteer and titles: the chunks that mention an entity listed in mentions_renamed (one of its names
-- left the dictionary). Leftmost-longest matching changes only where the gone name was the one
-- matched, and each such chunk mentions its entity; so these are all the chunks it can change.
select distinct m.chunk_id
from mentions m
join chunks c using (chunk_id)
where m.entity_id in (select entity_id from mentions_renamed);

-- name: chunks_all
-- Every chunk: more names changed than probing pays for.
select chunk_id from chunks;

-- name: chunks_probed
-- Chunks whose folded text matches $pattern (RE2: each changed name's tokens with optional white
-- space between them), with their text: a superset of the chunks where those names occur.
select c.chunk_id, c.text
from chunk_folded f
join chunks c using (chunk_id)
where regexp_matches(f.folded, $pattern)
order by c.chunk_id;

-- name: matched_add
-- Add to mentions_matched the chunks of $ids (a JSON array) it does not hold yet.
insert into mentions_matched
select unnest(from_json($ids, '["VARCHAR"]')) as chunk_id
except
select chunk_id from mentions_matched;

-- name: matched_count
-- How many chunks mentions_matched holds.
select count(*) from mentions_matched;

-- name: chunk_texts_todo
-- The text of the first $n chunks after the chunk id $after (null: from the first) to be matched again
-- (mentions_matched), with their document's title, in chunk id order.
select c.chunk_id, c.text, d.title
from chunks c
join documents d using (doc_id)
where c.chunk_id in (select chunk_id from mentions_matched)
  and ($after::varchar is null or c.chunk_id > $after)
order by c.chunk_id
limit $n;

-- name: found
-- The scratch relation mentions_found, which pipelines.bulk.insert fills: each mention found in this run, as often
-- as it was found (in the text, in the title), with the windows that name it ([]: the whole chunk).
create or replace temp table mentions_found (entity_id varchar not null, chunk_id varchar not null, windows integer[]);

-- name: found_insert
-- Store the mentions found (mentions_found), one row per entity and chunk in that order: the union of its windows,
-- or [] (the whole chunk) where one of them is the whole chunk; return how many.
insert into mentions (entity_id, chunk_id, windows)
select entity_id, chunk_id,
       case when bool_or(len(windows) = 0) then []::integer[] else list_sort(list_distinct(flatten(list(windows)))) end
from mentions_found
group by entity_id, chunk_id
order by entity_id, chunk_id;

-- name: found_drop
-- Drop the scratch relation mentions_found, once stored: it would hold DuckDB memory for the run.
drop table mentions_found;

-- name: tokens
-- The scratch relation mentions_tokens: the folded tokens of the chunks being matched ($ids, a JSON array).
create or replace temp table mentions_tokens as select unnest(from_json($ids, '["VARCHAR"]')) as token;

-- name: names_matchable
-- The names that may occur in the chunks being matched (every name with $all, else those whose first
-- folded token is among the chunks' tokens, mentions_tokens), each spelling with the smallest entity id
-- that has it.
select words, min(entity_id) as entity_id
from names_next
where words <> '' and ($all or split_part(words, chr(31), 1) in (select token from mentions_tokens))
group by words
order by words;

-- name: dictionary_out
-- Every matchable name of names_next, as names_matchable with $all, written to the Parquet file $path: the dictionary
-- each shard of chunks is matched with (pipelines.mentions.shared.names_found).
copy (
    select words, min(entity_id) as entity_id
    from names_next
    where words <> ''
    group by words
    order by words
) to $path (format parquet);

-- name: shard_texts
-- The scratch relation shard_input (pipelines.shards): each chunk to be matched again (mentions_matched), keyed by
-- its id, with its text.
create or replace temp table shard_input as
select chunk_id as shard_key, 0 as seq, chunk_id, text
from chunks
where chunk_id in (select chunk_id from mentions_matched);

-- name: mentions_delete
-- Forget the mentions of chunks that are gone or about to be matched again (mentions_matched), each row's entity
-- kept in the scratch relation mentions_forgotten (with the row's id, by which it is deleted); returns how many.
create or replace temp table mentions_forgotten as
select rowid as row_id, entity_id
from mentions
where chunk_id in (select chunk_id from mentions_matched)
   or chunk_id not in (select chunk_id from chunks);
delete from mentions where rowid in (select row_id from mentions_forgotten);
select count(*) from mentions_forgotten;

-- name: affected
-- Into the scratch relation mentions_affected, the entities whose mentions or names changed in this run: those of
-- the mentions forgotten (mentions_forgotten) or found (mentions_found), and of the names whose weight changed
-- (names_changed); returns how many.
create or replace temp table mentions_affected as
select entity_id from mentions_forgotten
union
select entity_id from mentions_found
union
select entity_id from names_changed;
select count(*) from mentions_affected;

-- name: chunk_state_delete
-- Forget the state of chunks that went, and of the chunks just matched whose state is recorded again
-- (chunk_state_update): a delete and an insert cost less than DuckDB's insert-or-replace.
delete from chunk_state
where chunk_id not in (select chunk_id from chunks)
   or chunk_id in (select chunk_id from mention_expected where chunk_id in (select chunk_id from mentions_matched));

-- name: chunk_state_update
-- Record what the mentions of the chunks just matched (mentions_matched) were computed from; their old
-- rows went in chunk_state_delete.
insert into chunk_state
select chunk_id, mention_hash
from mention_expected
where chunk_id in (select chunk_id from mentions_matched);

-- name: changed_entities
-- Log the entities whose mentions or names were just rewritten (mentions_affected).
insert into changed
select 'entity', entity_id
from mentions_affected;

-- name: names_delete
-- Forget the stored names of the entities listed in mentions_affected (names_update writes them again).
delete from names where entity_id in (select entity_id from mentions_affected);

-- name: names_update
-- Store this run's names of the entities listed in mentions_affected (their old names were deleted).
insert into names (entity_id, name, weight)
select entity_id, name, weight
from names_next
where entity_id in (select entity_id from mentions_affected)
order by entity_id, name;

-- name: entities_delete
-- Forget the entities listed in mentions_affected (entities_insert writes those still mentioned).
delete from entities where entity_id in (select entity_id from mentions_affected);

-- name: entities_insert
-- The entities listed in mentions_affected that some chunk mentions; the label is the heaviest name,
-- then the smallest (min_by: a window costs several times more here).
insert into entities (entity_id, label, n_chunks, degree)
with labels as (
    select entity_id, min_by(name, {'weight': -weight, 'name': name}) as label
    from names
    where entity_id in (select entity_id from mentions_affected)
    group by entity_id
)
select m.entity_id, l.label, count(*)::integer, 0
from mentions m
join labels l using (entity_id)
group by m.entity_id, l.label
order by m.entity_id;

-- name: entity_aliases_delete
-- Forget the aliases of the entities listed in mentions_affected (entity_aliases_insert writes them again).
delete from entity_aliases where entity_id in (select entity_id from mentions_affected);

-- name: entity_aliases_insert
-- Every name of the entities listed in mentions_affected that are in the index, with its tokens (what
-- query.seed_names looks a question's words up by), in the order of its tokens.
insert into entity_aliases (entity_id, alias, words)
select n.entity_id, n.name, n.words
from names_next n
where n.entity_id in (select entity_id from mentions_affected)
  and n.entity_id in (select entity_id from entities)
order by n.words, n.entity_id, n.name;

-- name: rejected_delete
-- Mode gazetteer: forget the rejected lines of the gazetteer file $source (written again).
delete from rejected where source = $source;

-- name: titles_rejected_delete
-- Forget the names of documents that mode titles rejected (pipelines.mentions.titles), found again in every run of it.
delete from rejected where reason = 'invalid_entity' and starts_with(detail, 'title ');

-- name: sizes
-- How many mentions and entities the index has.
select (select count(*) from mentions), (select count(*) from entities);
