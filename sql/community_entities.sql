-- The entities to cluster with their labels: all of them, or with $all false those in community_region.
-- In no order: clustering sorts them itself.
select entity_id, label
from entities
where $all or entity_id in (select entity_id from community_region)
