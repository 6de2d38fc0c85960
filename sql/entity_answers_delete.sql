-- Delete the answers about to be chosen again (keys 'entity') and those of entities that are gone.
delete from entity_answers
where entity_id in (select id from keys where kind = 'entity')
   or entity_id not in (select entity_id from entities)
