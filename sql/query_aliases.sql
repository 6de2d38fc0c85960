-- Every name of the entities $ids (label included), in order.
select entity_id, alias
from entity_aliases
where entity_id in (select unnest($ids::varchar[]))
order by entity_id, alias
