-- Into the scratch table mention_expected: the chunks to check (every chunk with $full, otherwise
-- those the run's change log lists: a chunk's own inputs change only when its document is split
-- again), each with the hash of what its mentions depend on besides its text and the dictionary
-- ($mode, its candidate $extractor, the edge $window, and the document's title or given entities);
-- `dirty` when that differs from what its stored mentions were computed from.
create or replace temp table mention_expected as
with checked as (
    select chunk_id, doc_id
    from chunks
    where $full or chunk_id in (select id from changed where kind = 'chunk')
),
given as (
    select doc_id, list(distinct entity_id order by entity_id) as entity_ids
    from document_entities
    where doc_id in (select doc_id from checked)
    group by doc_id
),
expected as (
    select c.chunk_id,
           sha256(to_json({'mode': $mode::varchar, 'extractor': $extractor::varchar, 'window': $window::varchar,
                           'title': case when $mode in ('titles', 'nlp', 'spacy') then d.title else '' end,
                           'given': case when $mode = 'given' then coalesce(g.entity_ids, []) else [] end}))
               as mention_hash
    from checked c
    join documents d using (doc_id)
    left join given g using (doc_id)
)
select e.chunk_id, e.mention_hash, s.mention_hash is distinct from e.mention_hash as dirty
from expected e
left join chunk_state s using (chunk_id)
