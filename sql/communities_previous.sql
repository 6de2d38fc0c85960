-- The stored communities with their title; parents before children (their members: sql/community_members_previous.sql).
select community_id, level, parent_id, graph_hash, title
from communities
order by level, community_id
