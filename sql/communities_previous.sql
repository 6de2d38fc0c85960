-- The stored communities with their title and member ids, most central first; parents before children.
select c.community_id, c.level, c.parent_id, c.graph_hash, c.title,
       list(m.entity_id order by m.centrality) as members
from communities c
join community_members m using (community_id)
group by all
order by c.level, c.community_id
