-- Statements of mentions modes nlp and spacy (pipelines.mentions.nlp): candidates, the decisions on them, and
-- their mentions.

-- name: candidates_reset
-- Forget every chunk's candidates (another extractor, or a new version of it).
delete from chunk_candidates;

-- name: candidates_gone
-- Forget the candidates of chunks that are gone.
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

-- name: shard_unextracted
-- The scratch relation shard_input (pipelines.shards): the chunks of `chunks_unextracted`, keyed by chunk id.
create or replace temp table shard_input as
select c.chunk_id as shard_key, 0 as seq, c.chunk_id, c.text, d.title
from chunks c
join documents d using (doc_id)
left join chunk_candidates x on x.chunk_id = c.chunk_id
where x.chunk_id is null or x.title is distinct from d.title;

-- name: variants
-- Into the scratch relation nlp_variants, each candidate id that stands for another
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

-- name: decisions
-- Every candidate of the corpus into candidate_decisions, with whether it becomes an
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

-- name: common_plurals
-- Out of nlp_variants, the plurals whose singular the corpus writes as a common word capitalised by its place
-- (candidate_decisions, reason 'position'): such a plural is no variant of that word but a candidate of its
-- own, decided by how the corpus writes it ("Teams" and "Dynamics" beside "the team", "dynamic").
delete from nlp_variants v
using candidate_decisions d
where d.entity_id = v.canonical and d.reason = 'position' and v.variant = v.canonical || 's'
returning v.variant;

-- name: dictionary
-- The candidates that become entities (candidate_decisions, reason 'entity'), each spelling with
-- the chunks that use it; an acronym's or plural's spellings are added by pipelines.mentions.nlp.
select s.entity_id, n.name, count(distinct x.chunk_id)::integer as weight
from chunk_candidates x, unnest(x.names) as u(n)
join candidate_decisions s on s.entity_id = n.entity_id and s.reason = 'entity'
group by s.entity_id, n.name
order by s.entity_id, n.name;

-- name: variant_names
-- Each variant (nlp_variants) with its spelling and the entity it stands for.
select variant, name, canonical from nlp_variants order by all;

-- name: chunks_touched
-- The chunks that can match differently once the entities listed in mentions_renamed
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

-- name: names_kept
-- The entities of this run's dictionary.
select distinct entity_id from names_next;

-- name: chunk_candidates_todo
-- The stored candidates (modes nlp and spacy) of every chunk to be matched again (mentions_matched), an
-- acronym or plural replaced by the entity it stands for (nlp_variants), with the spelling found.
select x.chunk_id, coalesce(e.canonical, n.entity_id) as entity_id, n.name
from chunk_candidates x, unnest(x.names) as u(n)
left join nlp_variants e on e.variant = n.entity_id
where x.chunk_id in (select chunk_id from mentions_matched)
order by x.chunk_id, entity_id, n.name;
