-- Each community's weight: the distinct chunks that mention at least one of its members.
update communities c
set weight = s.weight
from (
    select cm.community_id, count(distinct m.chunk_id)::integer as weight
    from community_members cm
    join mentions m using (entity_id)
    group by cm.community_id
) s
where c.community_id = s.community_id
