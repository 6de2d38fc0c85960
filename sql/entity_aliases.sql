-- Every name of every entity in the index.
insert into entity_aliases (entity_id, alias)
select n.entity_id, n.name
from names n
where n.entity_id in (select entity_id from entities)
order by all
