-- Co-occurrence edges from the entities in keys 'src' into the scratch table edges_next (the edge
-- rows hold both directions of each pair): weight = chunks mentioning both entities (in one window of
-- the chunk when mentions carry windows: see edge_window), rank = dst's
-- place among src's neighbours (weight descending, then dst ascending). Pairs sharing fewer than
-- $min_weight chunks are left out, and only src's $top_k strongest rows are kept (null: all), so an
-- edge may be stored in one direction only.
create or replace temp table edges_next as
with pairs as (
    select a.entity_id as src, b.entity_id as dst, count(*)::integer as weight
    from mentions a
    join mentions b on a.chunk_id = b.chunk_id and a.entity_id <> b.entity_id
        and (coalesce(len(a.windows), 0) = 0 or coalesce(len(b.windows), 0) = 0
             or list_has_any(a.windows, b.windows))
    where a.entity_id in (select id from keys where kind = 'src')
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
