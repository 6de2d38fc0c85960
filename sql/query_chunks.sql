-- The readable chunks that mention the entities $ids, best evidence first per entity: from the
-- document titled after it, then shared with fewer entities, then by chunk id; at most $per_entity each.
with crowd as (
    select chunk_id, count(*) as n_entities
    from mentions
    where chunk_id in (select chunk_id from mentions where entity_id in (select unnest($ids::varchar[])))
    group by chunk_id
)
select m.entity_id, c.chunk_id, c.doc_id, c.text, c.n_tokens
from mentions m
join chunks c using (chunk_id)
join documents d using (doc_id)
join crowd using (chunk_id)
join entities e on e.entity_id = m.entity_id
where m.entity_id in (select unnest($ids::varchar[]))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
qualify row_number() over (partition by m.entity_id
                           order by lower(d.title) <> lower(e.label), crowd.n_entities, c.chunk_id) <= $per_entity
order by m.entity_id, row_number() over (partition by m.entity_id
                                         order by lower(d.title) <> lower(e.label), crowd.n_entities, c.chunk_id)
