-- Modes nlp and spacy: the chunks that can match differently once the entities listed in keys 'name'
-- entered or left the dictionary: those with a stored candidate whose id, or the entity it is a variant
-- of now, is listed, and those that mention a listed entity now (through a variant that may be gone).
select distinct x.chunk_id
from chunk_candidates x, unnest(x.names) as u(n)
left join nlp_variants e on e.variant = n.entity_id
where n.entity_id in (select id from keys where kind = 'name')
   or e.canonical in (select id from keys where kind = 'name')
union
select chunk_id
from mentions
where entity_id in (select id from keys where kind = 'name')
order by chunk_id
