-- The stored communities with their title (all of them, or with $all false those with a member in
-- community_region); parents before children (their members: sql/community_members_previous.sql).
select community_id, level, parent_id, graph_hash, title
from communities
where $all or community_id in (select community_id from community_members
                               where entity_id in (select entity_id from community_region))
order by level, community_id
