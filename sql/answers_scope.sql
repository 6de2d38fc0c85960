-- Into keys 'answer': the entities whose short answer may have to be chosen again. Every entity with
-- $full; otherwise those whose mentions or names changed and those that mention a chunk this run
-- rewrote (the run's change log). answer_todo then keeps those whose input hash really changed.
insert into keys
select 'answer', entity_id
from entities
where $full
   or entity_id in (select id from changed where kind = 'entity')
   or entity_id in (select m.entity_id from mentions m join changed c on c.kind = 'chunk' and c.id = m.chunk_id)
