-- The stored members of every community, most central first (grouped by community in Python: an ordered
-- list aggregate costs more than the rows).
select community_id, entity_id
from community_members
order by community_id, centrality
