-- Each community's weight: the distinct chunks that mention at least one of its members. Computed
-- for every community with $full; otherwise for those rewritten (keys 'community') and those with a
-- member whose mentions changed (the run's change log), the only ones whose weight can move. (One
-- IN list, not ORed conditions: DuckDB then filters the members before the join with mentions.)
update communities c
set weight = s.weight
from (
    select cm.community_id, count(distinct m.chunk_id)::integer as weight
    from community_members cm
    join mentions m using (entity_id)
    where cm.community_id in (
        select community_id from communities where $full
        union all
        select id from keys where kind = 'community'
        union all
        select community_id from community_members
        where entity_id in (select id from changed where kind = 'entity')
    )
    group by cm.community_id
) s
where c.community_id = s.community_id
