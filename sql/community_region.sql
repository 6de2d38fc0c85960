-- Into the scratch table community_region: the entities whose communities a rerun may change. From
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
                       where entity_id in (select id from changed where kind = 'entity'))
