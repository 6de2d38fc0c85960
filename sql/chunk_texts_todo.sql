-- The text of every chunk to be matched again (keys 'chunk'), with its document's title.
select c.chunk_id, c.text, d.title
from chunks c
join documents d using (doc_id)
where c.chunk_id in (select id from keys where kind = 'chunk')
order by c.chunk_id
