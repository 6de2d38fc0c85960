-- Chunks whose folded text is not stored yet: any chunk with $full, else only those this run wrote
-- (the change log), which spares reading every chunk's text.
select c.chunk_id, c.text
from chunks c
anti join chunk_folded f using (chunk_id)
where $full or c.chunk_id in (select id from changed where kind = 'chunk')
order by c.chunk_id
