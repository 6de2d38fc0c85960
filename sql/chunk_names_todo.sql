-- Mode titles: the name of the document (sql/document_names.sql) of every chunk to be matched again (keys
-- 'chunk'): the entity its chunks are about.
select c.chunk_id, n.name
from chunks c
join document_names n using (doc_id)
where c.chunk_id in (select id from keys where kind = 'chunk')
order by c.chunk_id
