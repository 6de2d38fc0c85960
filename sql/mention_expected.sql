-- Into the scratch table mention_expected: every chunk with the hash of
-- what its mentions depend on besides its text and the dictionary ($mode, and the document's title
-- or given entities); `dirty` when that differs from what its stored mentions were computed from.
create or replace temp table mention_expected as
with given as (
    select doc_id, list(distinct entity_id order by entity_id) as entity_ids
    from document_entities
    group by doc_id
),
expected as (
    select c.chunk_id,
           sha256(to_json({'mode': $mode::varchar,
                           'title': case when $mode in ('titles', 'nlp') then d.title else '' end,
                           'given': case when $mode = 'given' then coalesce(g.entity_ids, []) else [] end}))
               as mention_hash
    from chunks c
    join documents d using (doc_id)
    left join given g using (doc_id)
)
select e.chunk_id, e.mention_hash, s.mention_hash is distinct from e.mention_hash as dirty
from expected e
left join chunk_state s using (chunk_id)
