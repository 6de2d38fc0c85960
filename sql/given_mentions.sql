-- Given mode: every chunk (of those in keys 'chunk') mentions each entity its document lists.
select distinct de.entity_id, c.chunk_id
from document_entities de
join chunks c using (doc_id)
where c.chunk_id in (select id from keys where kind = 'chunk')
order by de.entity_id, c.chunk_id
