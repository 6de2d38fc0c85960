-- Co-occurrence edges into the scratch table edges_next, one row per direction:
-- weight = chunks mentioning both entities, rank = dst's place among src's neighbours
-- (weight descending, then dst ascending).
create or replace temp table edges_next as
with pairs as (
    select a.entity_id as src, b.entity_id as dst, count(*)::integer as weight
    from mentions a
    join mentions b on a.chunk_id = b.chunk_id and a.entity_id <> b.entity_id
    group by all
)
select src, dst, weight,
       row_number() over (partition by src order by weight desc, dst)::integer as rank
from pairs
