-- Statements of the stage mentions (pipelines.mentions), in the order a run uses them.

-- name: candidates_reset
-- Modes nlp and spacy: forget every chunk's candidates (another extractor, or a new version of it).
delete from chunk_candidates;

-- name: candidates_gone
-- Modes nlp and spacy: forget the candidates of chunks that are gone.
delete from chunk_candidates where chunk_id not in (select chunk_id from chunks);

-- name: chunks_unextracted
-- Chunks whose entity candidates (mode nlp) are not stored yet, or were found under another title of
-- their document, with the document's current title.
select c.chunk_id, c.text, d.title
from chunks c
join documents d using (doc_id)
left join chunk_candidates x on x.chunk_id = c.chunk_id
where x.chunk_id is null or x.title is distinct from d.title
order by c.chunk_id;

-- name: dictionary_new
-- The scratch relation names_next, empty: it receives this run's dictionary.
create or replace temp table names_next (
    entity_id varchar not null, name varchar not null, weight integer not null,
    words varchar  -- folded tokens joined by U+001F
);

-- name: decisions_clear
-- Forget the candidate decisions, which modes nlp and spacy write again.
delete from candidate_decisions;

-- name: title_names_reset
-- Mode titles: forget every title's tokens (a new version of how they are derived).
delete from title_names;

-- name: document_names
-- Mode titles: into the scratch relation document_names, the name each document's entity gets: its title,
-- or, when several documents share that title, the title with the document's id ("Title (doc_id)"): a
-- title shared by documents names none of them (as a short form two titles share names neither,
-- names_titles), so it never makes their chunks one entity. query.scope_names (sql/query.sql) names them alike.
create or replace temp table document_names as
select doc_id, title,
       case when count(*) over (partition by title) > 1 then title || ' (' || doc_id || ')' else title end as name
from documents;

-- name: title_names_delete
-- Mode titles: forget the tokens of names that no document has any more (document_names).
delete from title_names where title not in (select name from document_names);

-- name: titles_untokenised
-- Mode titles: the document names (document_names) not tokenised yet (new or retitled documents,
-- or a title that became shared or unshared), for pipelines.mentions to add to title_names.
select distinct name from document_names where name not in (select title from title_names) order by name;

-- name: names_titles
-- Mode titles: the dictionary into names_next. Each title names its entity (weight 1); a title's
-- short form (without a trailing "(...)") is one more name (weight 0) when no other title has the
-- same short form and no title is spelled like it. No (entity_id, name) pair can come twice: titles
-- are unique, a short form differs from its own title and is spelled like no title, and one shared
-- by two titles is left out; so the rows need no grouping (which cost half the statement).
insert into names_next
with claims as (
    select short_words, count(*) as n
    from title_names
    group by short_words
)
select entity_id, title as name, 1 as weight, words
from title_names
union all
select t.entity_id, t.short, 0, t.short_words
from title_names t
join claims c using (short_words)
where t.short <> '' and t.short <> t.title and c.n = 1
  and t.short_words not in (select words from title_names);

-- name: names_given
-- Mode given: every (entity_id, label) the documents list, with how many documents list it.
select entity_id, label, count(*) from document_entities group by all;

-- name: nlp_variants
-- Modes nlp and spacy: into the scratch relation nlp_variants, each candidate id that stands for another
-- entity, with its spelling:
--   an acronym the text expands ("World Health Organization (WHO)"), to the expansion defined in most
--   chunks, then the smallest id;
--   a plural whose singular is also a candidate ("Democrats" -> "Democrat"), unless it is ever spelled
--   in capitals (AIDS is no plural of aid). Known limit: a surname that is a first name plus "s"
--   ("Williams") merges into it when both occur.
create or replace temp table nlp_variants as
with seen as (
    select x.chunk_id, n.entity_id, n.name
    from chunk_candidates x, unnest(x.names) as u(n)
),
defined as (
    select a.acronym as variant, a.expansion as canonical, count(distinct x.chunk_id) as n
    from chunk_candidates x, unnest(x.acronyms) as u(a)
    group by all
),
acronyms as (
    select variant, canonical
    from defined
    qualify row_number() over (partition by variant order by n desc, canonical) = 1
),
ids as (
    select entity_id, bool_or(name = upper(name) and name <> lower(name)) as capitals
    from seen
    group by entity_id
),
plurals as (
    select p.entity_id as variant, coalesce(a.canonical, s.entity_id) as canonical
    from ids p
    join ids s on s.entity_id = left(p.entity_id, -1)
    left join acronyms a on a.variant = s.entity_id
    where p.entity_id like '%s' and p.entity_id not like '%ss' and length(p.entity_id) >= 4 and not p.capitals
      and p.entity_id not in (select variant from acronyms)
),
variants as (
    select variant, canonical from acronyms
    union all
    select variant, canonical from plurals
),
spelled as (
    select entity_id, min(name) as name
    from seen
    where entity_id in (select variant from variants)
    group by entity_id
)
select v.variant, coalesce(s.name, upper(v.variant)) as name, v.canonical
from variants v
left join spelled s on s.entity_id = v.variant;

-- name: nlp_decisions
-- Modes nlp and spacy: every candidate of the corpus into candidate_decisions, with whether it becomes an
-- entity and why (the caller empties the table first). In this order:
--   variant: an acronym or plural (nlp_variants) is one more name of the entity it stands for, kept with it;
--   position: a one-word candidate spelled as a capitalised word (its spelling found in most chunks) that the
--     corpus writes capitalised in mid-sentence less than $mid_share of the times it writes it either so
--     or in lower case: a common word capitalised by its place (sentence or line start, heading, item);
--   opening: a longer candidate no chunk writes in mid-sentence (chunk_candidates.mid_names) whose first
--     word passes that test ("Keeping America", "May I"): a phrase that opens sentences, not a name;
--   rare: seen in fewer than $min_chunks chunks;
--   frequent: once there are $min_corpus chunks, seen in more than $max_share of them;
--   entity: kept.
-- An acronym's or plural's chunks count for the entity it stands for. `lowercase`: the name is no single
-- capitalised word (the shape a common word takes where a sentence starts, which a question written in
-- lower case cannot tell from the word: "Brown", "Safe"), and its word (of a longer name, its word the
-- corpus writes least often in lower case) is written in lower case at most $lowercase_share of the times
-- the corpus writes it: "MkDocs", "New York", "Banco Central", not "Time" nor "Water Board".
insert into candidate_decisions
with seen as (
    select x.chunk_id, n.entity_id, n.name
    from chunk_candidates x, unnest(x.names) as u(n)
),
cases as (
    select w.word, sum(w.lower)::integer as n_lower, sum(w.mid)::integer as n_mid,
           sum(w.other)::integer as n_other
    from chunk_candidates x, unnest(x.words) as u(w)
    group by w.word
),
spelled as (
    select entity_id, name, count(distinct chunk_id) as n
    from seen
    group by all
),
named as (
    select entity_id, arg_max(name, {'n': n, 'name': -rank}) as name
    from (select *, row_number() over (partition by entity_id order by name) as rank from spelled)
    group by entity_id
),
counted as (
    select coalesce(e.canonical, s.entity_id) as entity_id, count(distinct s.chunk_id)::integer as n_chunks
    from seen s
    left join nlp_variants e on e.variant = s.entity_id
    group by all
),
worded as (
    select n.entity_id, c.word, c.n_lower, c.n_mid, c.n_other
    from named n, unnest(regexp_extract_all(n.entity_id, '\pL+(?:-\pL+)*')) as u(word)
    join cases c on c.word = u.word
),
mid_named as (
    select distinct u.entity_id
    from chunk_candidates x, unnest(x.mid_names) as u(entity_id)
),
first_word as (
    select n.entity_id, c.n_lower, c.n_mid, c.n_other
    from named n
    join cases c on c.word = split_part(n.entity_id, ' ', 1)
    where contains(n.entity_id, ' ') and n.entity_id not in (select entity_id from mid_named)
),
word_of as (
    select entity_id,
           arg_min({'n_lower': n_lower, 'n_mid': n_mid, 'n_other': n_other},
                   {'share': n_lower / (n_lower + n_mid + n_other), 'seen': -(n_lower + n_mid + n_other),
                    'word': word}) as w
    from worded
    group by entity_id
),
measured as (
    select n.entity_id, n.name, v.canonical,
           coalesce(c.n_chunks, cv.n_chunks) as n_chunks,
           coalesce(w.w.n_lower, 0) as n_lower, coalesce(w.w.n_mid, 0) as n_mid,
           coalesce(w.w.n_other, 0) as n_other,
           f.n_lower as first_lower, f.n_mid as first_mid, f.n_other as first_other,
           not contains(n.entity_id, ' ')
               and n.name = upper(left(n.name, 1)) || lower(substr(n.name, 2)) and n.name <> lower(n.name)
               as capitalised_word
    from named n
    left join nlp_variants v on v.variant = n.entity_id
    left join counted c on c.entity_id = n.entity_id
    left join counted cv on cv.entity_id = v.canonical
    left join word_of w on w.entity_id = n.entity_id
    left join first_word f on f.entity_id = n.entity_id
),
decided as (
    select *,
           case
               when canonical is not null then 'variant'
               when capitalised_word and n_lower > 0 and n_mid < $mid_share * (n_mid + n_lower) then 'position'
               when first_lower > 0 and first_mid < $mid_share * (first_mid + first_lower) then 'opening'
               when n_chunks < $min_chunks then 'rare'
               when (select count(*) from chunks) >= $min_corpus
                    and n_chunks > $max_share * (select count(*) from chunks) then 'frequent'
               else 'entity'
           end as reason
    from measured
)
select d.entity_id, d.name, d.reason = 'entity' or coalesce(k.reason = 'entity', false), d.reason, d.canonical,
       d.n_chunks,
       case when d.reason = 'opening' then d.first_lower else d.n_lower end,
       case when d.reason = 'opening' then d.first_mid else d.n_mid end,
       case when d.reason = 'opening' then d.first_other else d.n_other end,
       not d.capitalised_word and d.n_lower + d.n_mid + d.n_other > 0
           and d.n_lower <= $lowercase_share * (d.n_lower + d.n_mid + d.n_other)
from decided d
left join decided k on k.entity_id = d.canonical
order by d.entity_id;

-- name: nlp_dictionary
-- Mode nlp: the candidates that become entities (candidate_decisions, reason 'entity'), each spelling with
-- the chunks that use it; an acronym's or plural's spellings are added by pipelines.mentions.
select s.entity_id, n.name, count(distinct x.chunk_id)::integer as weight
from chunk_candidates x, unnest(x.names) as u(n)
join candidate_decisions s on s.entity_id = n.entity_id and s.reason = 'entity'
group by s.entity_id, n.name
order by s.entity_id, n.name;

-- name: nlp_variant_names
-- Modes nlp and spacy: each variant (nlp_variants) with its spelling and the entity it stands for.
select variant, name, canonical from nlp_variants order by all;

-- name: mention_expected
-- Into the scratch relation mention_expected: the chunks to check (every chunk with $full, otherwise
-- those the run's change log lists: a chunk's own inputs change only when its document is split
-- again), each with the hash of what its mentions depend on besides its text and the dictionary
-- ($mode, its candidate $extractor, the edge $window, and the document's title or given entities);
-- `dirty` when that differs from what its stored mentions were computed from.
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
select e.chunk_id, e.mention_hash, s.mention_hash is distinct from e.mention_hash as dirty
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

-- name: chunks_unfolded
-- Chunks whose folded text is not stored yet: any chunk with $full, else only those this run wrote
-- (the change log), which spares reading every chunk's text.
select c.chunk_id, c.text
from chunks c
anti join chunk_folded f using (chunk_id)
where $full or c.chunk_id in (select id from changed where kind = 'chunk')
order by c.chunk_id;

-- name: renamed
-- The scratch relation mentions_renamed: the entities that entered or left the dictionary in this run ($ids, a JSON array).
create or replace temp table mentions_renamed as select unnest(from_json($ids, '["VARCHAR"]')) as entity_id;

-- name: chunks_touched_nlp
-- Modes nlp and spacy: the chunks that can match differently once the entities listed in mentions_renamed
-- entered or left the dictionary: those with a stored candidate whose id, or the entity it is a variant
-- of now, is listed, and those that mention a listed entity now (through a variant that may be gone).
select distinct x.chunk_id
from chunk_candidates x, unnest(x.names) as u(n)
left join nlp_variants e on e.variant = n.entity_id
where n.entity_id in (select entity_id from mentions_renamed)
   or e.canonical in (select entity_id from mentions_renamed)
union
select chunk_id
from mentions
where entity_id in (select entity_id from mentions_renamed)
order by chunk_id;

-- name: left
-- The scratch relation mentions_left: the entities one of whose names left the dictionary in this run ($ids, a JSON array).
create or replace temp table mentions_left as select unnest(from_json($ids, '["VARCHAR"]')) as entity_id;

-- name: chunks_naming
-- Modes gazetteer and titles: the chunks that mention an entity listed in mentions_left (one of its names
-- left the dictionary). Leftmost-longest matching changes only where the gone name was the one
-- matched, and each such chunk mentions its entity; so these are all the chunks it can change.
select distinct m.chunk_id
from mentions m
join chunks c using (chunk_id)
where m.entity_id in (select entity_id from mentions_left);

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

-- name: given_mentions
-- Given mode: every chunk (of those in mentions_matched) mentions each entity its document lists.
select distinct de.entity_id, c.chunk_id
from document_entities de
join chunks c using (doc_id)
where c.chunk_id in (select chunk_id from mentions_matched)
order by de.entity_id, c.chunk_id;

-- name: names_kept
-- Modes nlp and spacy: the entities of this run's dictionary.
select distinct entity_id from names_next;

-- name: chunk_candidates_todo
-- The stored candidates (modes nlp and spacy) of every chunk to be matched again (mentions_matched), an
-- acronym or plural replaced by the entity it stands for (nlp_variants), with the spelling found.
select x.chunk_id, coalesce(e.canonical, n.entity_id) as entity_id, n.name
from chunk_candidates x, unnest(x.names) as u(n)
left join nlp_variants e on e.variant = n.entity_id
where x.chunk_id in (select chunk_id from mentions_matched)
order by x.chunk_id, entity_id, n.name;

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

-- name: chunk_names_todo
-- Mode titles: the name of the document (document_names) of every chunk to be matched again
-- (mentions_matched): the entity its chunks are about.
select c.chunk_id, n.name
from chunks c
join document_names n using (doc_id)
where c.chunk_id in (select chunk_id from mentions_matched)
order by c.chunk_id;

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

-- name: rewritten
-- The scratch relation mentions_rewritten: the entities whose mentions or names are rewritten in this run, those
-- of mentions_affected.
create or replace temp table mentions_rewritten as
select entity_id from mentions_affected;

-- name: changed_entities
-- Log the entities whose mentions or names were just rewritten (mentions_rewritten).
insert into changed
select 'entity', entity_id
from mentions_rewritten;

-- name: names_delete
-- Forget the stored names of the entities listed in mentions_rewritten (names_update writes them again).
delete from names where entity_id in (select entity_id from mentions_rewritten);

-- name: names_update
-- Store this run's names of the entities listed in mentions_rewritten (their old names were deleted).
insert into names (entity_id, name, weight)
select entity_id, name, weight
from names_next
where entity_id in (select entity_id from mentions_rewritten)
order by entity_id, name;

-- name: entities_delete
-- Forget the entities listed in mentions_rewritten (entities_insert writes those still mentioned).
delete from entities where entity_id in (select entity_id from mentions_rewritten);

-- name: entities_insert
-- The entities listed in mentions_rewritten that some chunk mentions; the label is the heaviest name,
-- then the smallest (min_by: a window costs several times more here).
insert into entities (entity_id, label, n_chunks, degree)
with labels as (
    select entity_id, min_by(name, {'weight': -weight, 'name': name}) as label
    from names
    where entity_id in (select entity_id from mentions_rewritten)
    group by entity_id
)
select m.entity_id, l.label, count(*)::integer, 0
from mentions m
join labels l using (entity_id)
group by m.entity_id, l.label
order by m.entity_id;

-- name: entity_aliases_delete
-- Forget the aliases of the entities listed in mentions_rewritten (entity_aliases_insert writes them again).
delete from entity_aliases where entity_id in (select entity_id from mentions_rewritten);

-- name: entity_aliases_insert
-- Every name of the entities listed in mentions_rewritten that are in the index, with its tokens (what
-- query.seed_names looks a question's words up by), in the order of its tokens.
insert into entity_aliases (entity_id, alias, words)
select n.entity_id, n.name, n.words
from names_next n
where n.entity_id in (select entity_id from mentions_rewritten)
  and n.entity_id in (select entity_id from entities)
order by n.words, n.entity_id, n.name;

-- name: rejected_delete
-- Mode gazetteer: forget the rejected lines of the gazetteer file $source (written again).
delete from rejected where source = $source;

-- name: titles_rejected
-- Mode titles: the documents whose names (document_names) are $names, those rejected for a control character
-- (pipelines.mentions), with their file and line.
select d.source, d.line, d.doc_id, n.name
from document_names n
join documents d using (doc_id)
where list_contains($names::varchar[], n.name)
order by d.source, d.line;

-- name: titles_rejected_delete
-- Forget the names of documents that mode titles rejected (pipelines.mentions), found again in every run of it.
delete from rejected where reason = 'invalid_entity' and starts_with(detail, 'title ');

-- name: mention_count
-- How many mentions the index has.
select count(*) from mentions;

-- name: entity_count
-- How many entities the index has.
select count(*) from entities;
