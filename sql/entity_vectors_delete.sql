-- Delete the vectors about to be made again (vector_todo) and those of entities that are gone.
delete from entity_vectors
where entity_id in (select entity_id from vector_todo)
   or entity_id not in (select entity_id from entities)
