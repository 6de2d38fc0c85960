-- Modes gazetteer and titles: the chunks that mention an entity listed in keys 'left' (one of its names
-- left the dictionary). Leftmost-longest matching changes only where the gone name was the one
-- matched, and each such chunk mentions its entity; so these are all the chunks it can change.
select distinct m.chunk_id
from mentions m
join chunks c using (chunk_id)
where m.entity_id in (select id from keys where kind = 'left')
