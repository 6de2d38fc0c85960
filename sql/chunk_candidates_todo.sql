-- The stored candidates (mode nlp) of every chunk to be matched again (keys 'chunk').
select x.chunk_id, n.entity_id
from chunk_candidates x, unnest(x.names) as u(n)
where x.chunk_id in (select id from keys where kind = 'chunk')
order by x.chunk_id, n.entity_id
