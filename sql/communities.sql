-- Statements of the stage communities (pipelines.communities), in the order a run uses them.

-- name: region_new
-- The scratch relation community_region, empty: the entities whose communities a rerun may change
-- (communities.community_region fills it).
create or replace temp table community_region (entity_id varchar not null);

-- name: entity_count
-- How many entities the index has.
select count(*) from entities;

-- name: changed_seeds
-- How many entities the run's change log lists for their edges or their mentions and names.
select count(distinct id) from changed where kind in ('edge', 'entity');

-- name: community_region
-- Into the scratch relation community_region: the entities whose communities a rerun may change. From
-- the entities whose edges changed (the run's change log), the new entities (in no level-0
-- community) and the members of communities that lost one, it follows edges (both ways) and level-0
-- membership (entity to community and back) until nothing new is reached: connected parts of the
-- graph and whole level-0 communities, which clustering may re-place (pipelines.communities). To
-- those it adds, without following their edges, the level-0 communities of the entities whose
-- mentions or names changed: their members stay, but their rows (order, title) are written again.
insert into community_region
with recursive
level0 as (
    select cm.entity_id, cm.community_id
    from community_members cm
    join communities c using (community_id)
    where c.level = 0
),
links(a_community, a, b_community, b) as materialized (
    select false, src, false, dst from edges
    union all
    select false, dst, false, src from edges
    union all
    select false, entity_id, true, community_id from level0
    union all
    select true, community_id, false, entity_id from level0
),
seeds(is_community, node) as (
    select false, id from changed where kind = 'edge'
    union
    select false, entity_id from entities where entity_id not in (select entity_id from level0)
    union
    select true, community_id from level0 where entity_id not in (select entity_id from entities)
),
reach(is_community, node) as (
    select is_community, node from seeds
    union
    select l.b_community, l.b
    from reach r
    join links l on l.a_community = r.is_community and l.a = r.node
)
select node
from reach
where not is_community
union
select entity_id
from level0
where community_id in (select community_id from level0
                       where entity_id in (select id from changed where kind = 'entity'));

-- name: region_size
-- How many entities the scratch relation community_region holds.
select count(*) from community_region;

-- name: community_entities
-- The entities to cluster with their labels: all of them, or with $all false those in community_region.
-- In no order: clustering sorts them itself.
select entity_id, label
from entities
where $all or entity_id in (select entity_id from community_region);

-- name: community_edges
-- The edges from the entities to cluster: all of them, or with $all false those from the entities in
-- community_region (their strengths need every one; clustering keeps those with both ends in it).
-- In no order: clustering sorts them itself.
select src, dst, weight
from edges
where $all or src in (select entity_id from community_region);

-- name: community_members_previous
-- The stored members of every community (or with $all false, of those with a member in
-- community_region), most central first (grouped by community in Python: an ordered list aggregate
-- costs more than the rows).
select community_id, entity_id
from community_members
where $all or community_id in (select community_id from community_members
                               where entity_id in (select entity_id from community_region))
order by community_id, centrality;

-- name: communities_previous
-- The stored communities with their title (all of them, or with $all false those with a member in
-- community_region); parents before children (their members: community_members_previous).
select community_id, level, parent_id, graph_hash, title
from communities
where $all or community_id in (select community_id from community_members
                               where entity_id in (select entity_id from community_region))
order by level, community_id;

-- name: changed_edge_entities
-- The entities whose edges changed in this run (the change log).
select id from changed where kind = 'edge';

-- name: changed_named_entities
-- The entities whose mentions or names changed in this run (the change log).
select id from changed where kind = 'entity';

-- name: community_ids
-- The id of every stored community.
select community_id from communities;

-- name: community_weight_total
-- The graph's total edge weight, each co-occurring pair once (what a partial graph's modularity is
-- scaled by).
select coalesce(sum(weight), 0)
from (
    select distinct least(src, dst) as a, greatest(src, dst) as b, weight
    from edges
    where src <> dst
);

-- name: rewritten
-- The scratch relation communities_rewritten: the communities rewritten or gone in this run ($ids, a JSON
-- array).
create or replace temp table communities_rewritten as
select unnest(from_json($ids, '["VARCHAR"]')) as community_id;

-- name: communities_delete
-- Forget the communities listed in communities_rewritten.
delete from communities where community_id in (select community_id from communities_rewritten);

-- name: community_members_delete
-- Forget the members of the communities listed in communities_rewritten.
delete from community_members where community_id in (select community_id from communities_rewritten);

-- name: community_weights
-- Each community's weight: the distinct chunks that mention at least one of its members. Computed
-- for every community with $full; otherwise for those rewritten (communities_rewritten) and those with a
-- member whose mentions changed (the run's change log), the only ones whose weight can move. (One
-- IN list, not ORed conditions: DuckDB then filters the members before the join with mentions.)
update communities c
set weight = s.weight
from (
    select cm.community_id, count(distinct m.chunk_id)::integer as weight
    from community_members cm
    join mentions m using (entity_id)
    where cm.community_id in (
        select community_id from communities where $full
        union all
        select community_id from communities_rewritten
        union all
        select community_id from community_members
        where entity_id in (select id from changed where kind = 'entity')
    )
    group by cm.community_id
) s
where c.community_id = s.community_id;

-- name: changed_communities
-- Log the communities whose rows were just rewritten or removed (communities_rewritten).
insert into changed
select 'community', community_id
from communities_rewritten;
