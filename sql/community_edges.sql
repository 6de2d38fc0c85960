-- The edges to cluster on: all of them, or with $all false those of community_region, which holds
-- both ends of each of its edges.
select src, dst, weight
from edges
where $all or src in (select entity_id from community_region)
order by src, dst
