-- Modes nlp and spacy: the names with an id in $ids (names a question uses) that the chunks $chunk_ids
-- store as candidates, entities or not (a candidate seen too rarely is text, not an entity).
select distinct n.name
from chunk_candidates x, unnest(x.names) as u(n)
where x.chunk_id in (select unnest($chunk_ids))
  and n.entity_id in (select unnest($ids))
order by n.name
