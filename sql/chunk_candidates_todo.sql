-- The stored candidates (mode nlp) of every chunk to be matched again (keys 'chunk'), an acronym
-- replaced by the expansion the corpus gives it (nlp_expansions).
select x.chunk_id, coalesce(e.expansion, n.entity_id) as entity_id
from chunk_candidates x, unnest(x.names) as u(n)
left join nlp_expansions e on e.acronym = n.entity_id
where x.chunk_id in (select id from keys where kind = 'chunk')
order by x.chunk_id, entity_id
