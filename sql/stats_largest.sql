-- The $limit largest communities (members, then weight), with titles.
select community_id, level, title, n_members, weight
from communities
order by n_members desc, weight desc, community_id
limit $limit
