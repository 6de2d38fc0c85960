-- Modes nlp and spacy: chunks with a stored candidate whose entity id, or the entity it is a variant of,
-- is listed in keys 'name' (entities that entered or left the dictionary): only those can match
-- differently.
select distinct x.chunk_id
from chunk_candidates x, unnest(x.names) as u(n)
left join nlp_variants e on e.variant = n.entity_id
where n.entity_id in (select id from keys where kind = 'name')
   or e.canonical in (select id from keys where kind = 'name')
order by x.chunk_id
