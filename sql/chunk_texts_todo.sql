-- The text of every chunk to be matched again (keys 'chunk').
select chunk_id, text
from chunks
where chunk_id in (select id from keys where kind = 'chunk')
order by chunk_id
