-- Mode nlp: chunks with a stored candidate whose entity id, or the expansion its acronym now has,
-- is listed in keys 'name' (entities that entered or left the dictionary): only those can match
-- differently.
select distinct x.chunk_id
from chunk_candidates x, unnest(x.names) as u(n)
left join nlp_expansions e on e.acronym = n.entity_id
where n.entity_id in (select id from keys where kind = 'name')
   or e.expansion in (select id from keys where kind = 'name')
order by x.chunk_id
