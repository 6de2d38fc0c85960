-- Forget the mentions of chunks that are gone or about to be matched again (keys 'chunk'); return
-- the entity of each row forgotten.
delete from mentions
where chunk_id in (select id from keys where kind = 'chunk')
   or chunk_id not in (select chunk_id from chunks)
returning entity_id
