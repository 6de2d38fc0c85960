-- Every mention with what choosing the entity's short answer depends on: the chunk's content and
-- place, its document's title, and how many entities share the chunk (fewer = the entity is more central).
with crowd as (
    select chunk_id, count(*)::integer as n_entities
    from mentions
    group by chunk_id
)
select m.entity_id, m.chunk_id, c.content_hash, c.ord, d.title, crowd.n_entities
from mentions m
join chunks c using (chunk_id)
join documents d using (doc_id)
join crowd using (chunk_id)
order by m.entity_id, m.chunk_id
