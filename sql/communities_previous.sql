-- The stored communities with their member ids, parents before children.
select c.community_id, c.level, c.parent_id, c.graph_hash, list(m.entity_id order by m.entity_id) as members
from communities c
join community_members m using (community_id)
group by all
order by c.level, c.community_id
