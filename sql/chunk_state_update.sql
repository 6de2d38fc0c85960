-- Record what the mentions of the chunks just matched (keys 'chunk') were computed from; their old
-- rows went in chunk_state_delete.
insert into chunk_state
select chunk_id, mention_hash
from mention_expected
where chunk_id in (select id from keys where kind = 'chunk')
