-- Log the chunks just written for documents split again (keys 'doc'). Chunks that went need no entry:
-- their mentions are forgotten, and the mentions stage logs those entities.
insert into changed
select 'chunk', chunk_id
from chunks
where doc_id in (select id from keys where kind = 'doc')
