-- Delete the answers about to be chosen again (answer_todo) and those of entities that are gone.
delete from entity_answers
where entity_id in (select entity_id from answer_todo)
   or entity_id not in (select entity_id from entities)
