-- Entities mentioned by chunks that are gone or about to be matched again (keys 'chunk').
select distinct entity_id
from mentions
where chunk_id in (select id from keys where kind = 'chunk')
   or chunk_id not in (select chunk_id from chunks)
