-- Log the chunks of documents being split again (keys 'doc') or no longer present: run before the
-- old chunks are deleted and again after the new ones are written, so both sets are logged.
insert into changed
select 'chunk', chunk_id
from chunks
where doc_id in (select id from keys where kind = 'doc')
   or doc_id not in (select doc_id from documents)
