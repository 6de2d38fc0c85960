-- Chunks whose folded text is not stored yet.
select c.chunk_id, c.text
from chunks c
anti join chunk_folded f using (chunk_id)
order by c.chunk_id
