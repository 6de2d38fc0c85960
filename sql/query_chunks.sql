-- The readable chunks ($scopes) that mention the entities $ids, best evidence first per entity: from the
-- document titled after it, then shared with fewer entities, then by chunk id; at most $per_entity each,
-- with what answers.choose ranks a candidate by (content hash, place, title, entities sharing it).
-- $labels (null, or one per id): the labels a scoped caller knows the entities by, for "titled after it".
with asked as (
    select unnest($ids::varchar[]) as entity_id, unnest($labels::varchar[]) as label
),
crowd as (
    select chunk_id, count(*) as n_entities
    from mentions
    where chunk_id in (select chunk_id from mentions where entity_id in (select unnest($ids::varchar[])))
    group by chunk_id
),
ranked as (
    select m.entity_id, c.chunk_id, coalesce(a.label, e.label) as label, c.text, c.content_hash, c.ord, d.title,
           crowd.n_entities::integer as n_entities,
           row_number() over (partition by m.entity_id
                              order by lower(d.title) <> lower(coalesce(a.label, e.label)), crowd.n_entities,
                                       c.chunk_id) as place
    from mentions m
    join asked a using (entity_id)
    join chunks c using (chunk_id)
    join documents d using (doc_id)
    join crowd using (chunk_id)
    join entities e on e.entity_id = m.entity_id
    where ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
)
select entity_id, chunk_id, label, text, content_hash, ord, title, n_entities
from ranked
where place <= $per_entity
order by entity_id, place
