-- Co-occurrence edges from the entities in keys 'src' into the scratch table edges_next (the edge
-- rows hold both directions of each pair): weight = chunks mentioning both entities, rank = dst's
-- place among src's neighbours (weight descending, then dst ascending).
create or replace temp table edges_next as
with pairs as (
    select a.entity_id as src, b.entity_id as dst, count(*)::integer as weight
    from mentions a
    join mentions b on a.chunk_id = b.chunk_id and a.entity_id <> b.entity_id
    where a.entity_id in (select id from keys where kind = 'src')
    group by all
)
select src, dst, weight,
       row_number() over (partition by src order by weight desc, dst)::integer as rank
from pairs
