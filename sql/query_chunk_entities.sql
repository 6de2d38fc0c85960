-- The entities the chunks $ids mention, with their labels and how many chunks mention them.
select m.chunk_id, m.entity_id, e.label, e.n_chunks
from mentions m
join entities e using (entity_id)
where m.chunk_id in (select unnest($ids::varchar[]))
