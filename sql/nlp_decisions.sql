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
order by d.entity_id
