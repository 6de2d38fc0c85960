-- The edges to cluster on: all of them, or with $all false those of community_region, which holds
-- both ends of each of its edges. In no order: clustering sorts them itself.
select src, dst, weight
from edges
where $all or src in (select entity_id from community_region)
