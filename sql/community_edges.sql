-- The edges from the entities to cluster: all of them, or with $all false those from the entities in
-- community_region (their strengths need every one; clustering keeps those with both ends in it).
-- In no order: clustering sorts them itself.
select src, dst, weight
from edges
where $all or src in (select entity_id from community_region)
