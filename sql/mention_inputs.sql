-- Every chunk with its document's title, its document's given entity ids (sorted) and the
-- state its stored mentions were computed from (null: never matched).
with given as (
    select doc_id, list(distinct entity_id order by entity_id) as entity_ids
    from document_entities
    group by doc_id
)
select c.chunk_id, d.title, coalesce(g.entity_ids, []::varchar[]) as given, s.mention_hash
from chunks c
join documents d using (doc_id)
left join given g using (doc_id)
left join chunk_state s using (chunk_id)
order by c.chunk_id
