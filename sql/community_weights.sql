-- Each community's weight: the distinct chunks that mention at least one of its members. Computed
-- for every community with $full; otherwise for those rewritten (keys 'community') and those with a
-- member whose mentions changed (the run's change log), the only ones whose weight can move.
update communities c
set weight = s.weight
from (
    select cm.community_id, count(distinct m.chunk_id)::integer as weight
    from community_members cm
    join mentions m using (entity_id)
    where $full
       or cm.community_id in (select id from keys where kind = 'community')
       or cm.community_id in (select community_id from community_members
                              where entity_id in (select id from changed where kind = 'entity'))
    group by cm.community_id
) s
where c.community_id = s.community_id
