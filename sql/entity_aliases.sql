-- Every name of the entities listed in keys 'entity' that are in the index.
insert into entity_aliases (entity_id, alias)
select n.entity_id, n.name
from names n
where n.entity_id in (select id from keys where kind = 'entity')
  and n.entity_id in (select entity_id from entities)
order by all
