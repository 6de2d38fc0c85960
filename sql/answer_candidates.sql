-- The candidates of every entity in answer_todo: each chunk that mentions it, with the chunk's
-- content hash, place and text, its document's title, and how many entities share the chunk.
with crowd as (
    select chunk_id, count(*)::integer as n_entities
    from mentions
    where chunk_id in (select m.chunk_id from mentions m join answer_todo t using (entity_id))
    group by chunk_id
)
select m.entity_id, m.chunk_id, c.content_hash, c.ord, d.title, crowd.n_entities, c.text
from mentions m
join answer_todo t using (entity_id)
join chunks c using (chunk_id)
join documents d using (doc_id)
join crowd using (chunk_id)
order by m.entity_id, m.chunk_id
