-- Mode nlp: into the scratch table nlp_expansions, each acronym that some text expands, with its
-- spelling and its expansion (the one defined in most chunks, then the smallest id).
create or replace temp table nlp_expansions as
with defined as (
    select a.acronym, a.expansion, count(distinct x.chunk_id) as n
    from chunk_candidates x, unnest(x.acronyms) as u(a)
    group by all
),
spelled as (
    select n.entity_id, min(n.name) as name
    from chunk_candidates x, unnest(x.names) as u(n)
    where n.entity_id in (select acronym from defined)
    group by n.entity_id
)
select d.acronym, coalesce(s.name, upper(d.acronym)) as name, d.expansion
from defined d
left join spelled s on s.entity_id = d.acronym
qualify row_number() over (partition by d.acronym order by d.n desc, d.expansion) = 1
