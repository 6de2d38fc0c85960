-- Modes nlp and spacy: into the scratch table nlp_variants, each candidate id that stands for another
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
left join spelled s on s.entity_id = v.variant
