-- The stored members of every community (or with $all false, of those with a member in
-- community_region), most central first (grouped by community in Python: an ordered list aggregate
-- costs more than the rows).
select community_id, entity_id
from community_members
where $all or community_id in (select community_id from community_members
                               where entity_id in (select entity_id from community_region))
order by community_id, centrality
