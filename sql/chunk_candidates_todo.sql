-- The stored candidates (modes nlp and spacy) of every chunk to be matched again (keys 'chunk'), an
-- acronym or plural replaced by the entity it stands for (nlp_variants), with the spelling found.
select x.chunk_id, coalesce(e.canonical, n.entity_id) as entity_id, n.name
from chunk_candidates x, unnest(x.names) as u(n)
left join nlp_variants e on e.variant = n.entity_id
where x.chunk_id in (select id from keys where kind = 'chunk')
order by x.chunk_id, entity_id, n.name
