-- Stage edges (pipelines.edges): co-occurrence edges with each entity's neighbours ranked, and entities.degree.

-- name: scope
-- The scratch relation edges_sources: the entities whose neighbour list may have changed, so that only
-- their edge rows are computed again. Every entity with $full; otherwise the entities whose mentions
-- changed (the run's change log), their previous neighbours and their current ones.
create or replace temp table edges_sources as
select distinct entity_id
from (
    select src as entity_id from edges where $full
    union all
    select entity_id from mentions where $full
    union all
    select id from changed where kind = 'entity'
    union all
    select e.dst from edges e join changed c on c.kind = 'entity' and c.id = e.src
    union all
    select b.entity_id
    from changed c
    join mentions a on c.kind = 'entity' and a.entity_id = c.id
    join mentions b on b.chunk_id = a.chunk_id
);

-- name: ranked
-- The table macro ranked_edges(sources, mentioned, min_weight, top_k), the one statement that computes edges (this
-- stage's `next`, and the query side's query.scope_edges for what some scopes may read): co-occurrence edges from
-- the rows of the relation named `sources` to those of the relation named `mentioned` (each: entity_id, chunk_id,
-- windows): weight = chunks mentioning both entities (in one window of the chunk when mentions carry windows: see
-- edge_window), rank = dst's place among src's neighbours (weight descending, then dst ascending). Pairs sharing
-- fewer than min_weight chunks are left out, and only src's top_k strongest rows are kept (null: all), so an
-- edge may be stored in one direction only.
create or replace temp macro ranked_edges(sources, mentioned, min_weight, top_k) as table
with pairs as (
    select a.entity_id as src, b.entity_id as dst, count(*)::integer as weight
    from query_table(sources) a
    join query_table(mentioned) b on a.chunk_id = b.chunk_id and a.entity_id <> b.entity_id
        and (coalesce(len(a.windows), 0) = 0 or coalesce(len(b.windows), 0) = 0
             or list_has_any(a.windows, b.windows))
    group by all
    having count(*) >= min_weight
),
ranked as (
    select src, dst, weight,
           row_number() over (partition by src order by weight desc, dst)::integer as rank
    from pairs
)
select src, dst, weight, rank
from ranked
where top_k::integer is null or rank <= top_k::integer;

-- name: next
-- Co-occurrence edges from the entities in edges_sources into the scratch relation edges_next (the edge
-- rows hold both directions of each pair), by ranked_edges with $min_weight and $top_k.
create or replace temp table edges_next as
with sourced as (
    select entity_id, chunk_id, windows
    from mentions
    where entity_id in (select entity_id from edges_sources)
)
select src, dst, weight, rank
from ranked_edges('sourced', 'mentions', $min_weight, $top_k);

-- name: changed
-- Log the entities whose incident edges changed (an edge appeared, vanished or changed weight; a
-- rank alone does not count): run before edges.delete, while `edges` still holds the old rows.
insert into changed
select distinct 'edge', coalesce(n.src, e.src)
from (select src, dst, weight from edges where src in (select entity_id from edges_sources)) e
full join edges_next n on n.src = e.src and n.dst = e.dst
where e.weight is distinct from n.weight;

-- name: delete
-- Delete the edges from entities in edges_sources whose weight or rank changed, or that no longer exist.
delete from edges e
where e.src in (select entity_id from edges_sources)
  and not exists (
    select 1 from edges_next n
    where n.src = e.src and n.dst = e.dst and n.weight = e.weight and n.rank = e.rank
);

-- name: insert
-- Insert the new or changed edges from edges_next.
insert into edges
select n.*
from edges_next n
anti join edges e on n.src = e.src and n.dst = e.dst
order by n.src, n.rank;

-- name: degrees
-- Each entity's number of distinct neighbours (0 for one that co-occurs with none), for those in
-- edges_sources (the only ones whose edges may have changed), counted in edges_next: their rows in edges are
-- now exactly those.
update entities e
set degree = coalesce(s.degree, 0)
from (
    select k.entity_id, count(n.dst)::integer as degree
    from edges_sources k
    left join edges_next n on n.src = k.entity_id
    group by k.entity_id
) s
where e.entity_id = s.entity_id;

-- name: count
-- How many edge rows the index holds.
select count(*) from edges;

-- name: scoped
-- How many entities had their edge rows computed again (edges_sources).
select count(*) from edges_sources;
