-- Store this run's names of the entities listed in keys 'entity' (their old names were deleted).
insert into names (entity_id, name, weight)
select entity_id, name, weight
from names_next
where entity_id in (select id from keys where kind = 'entity')
order by entity_id, name
