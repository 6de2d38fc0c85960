-- The co-occurrence edges among the entities $ids as an index of only the documents $scopes may read
-- would hold them (as sql/edges.sql computes them): weight = readable chunks mentioning both (in one
-- window when mentions carry windows), at least $min_weight, and only each src's $top_k strongest rows
-- (null: all); rank = dst's place among src's neighbours. In the order a walk reads them.
with readable as (
    select m.entity_id, m.chunk_id, m.windows
    from mentions m
    join chunks c using (chunk_id)
    join documents d using (doc_id)
    where (d.scope is null or list_contains($scopes::varchar[], d.scope))
      and m.entity_id in (select unnest($ids::varchar[]))
),
pairs as (
    select a.entity_id as src, b.entity_id as dst, count(*)::integer as weight
    from readable a
    join readable b on a.chunk_id = b.chunk_id and a.entity_id <> b.entity_id
        and (coalesce(len(a.windows), 0) = 0 or coalesce(len(b.windows), 0) = 0
             or list_has_any(a.windows, b.windows))
    group by all
    having count(*) >= $min_weight
),
ranked as (
    select src, dst, weight,
           row_number() over (partition by src order by weight desc, dst)::integer as rank
    from pairs
)
select src, dst, weight, rank
from ranked
where $top_k::integer is null or rank <= $top_k::integer
order by src, rank
