-- The level-0 communities of the entities $ids.
select distinct cm.community_id
from community_members cm
join communities c using (community_id)
where c.level = 0 and cm.entity_id in (select unnest($ids::varchar[]))
order by cm.community_id
