-- Entities of keys 'answer' whose short answer must be chosen again: the hash of exactly what the
-- choice reads (their names; each candidate chunk's id, content, place, title and crowding; the
-- version and $max_chars) differs from the stored answer's, or there is none. Into the scratch
-- table answer_todo.
create or replace temp table answer_todo as
with scoped as (
    select m.entity_id, m.chunk_id
    from mentions m
    join keys k on k.kind = 'answer' and k.id = m.entity_id
),
crowd as (
    select chunk_id, count(*)::integer as n_entities
    from mentions
    where chunk_id in (select chunk_id from scoped)
    group by chunk_id
),
candidates as (
    select m.entity_id, m.chunk_id, c.content_hash, c.ord, d.title, crowd.n_entities
    from scoped m
    join chunks c using (chunk_id)
    join documents d using (doc_id)
    join crowd using (chunk_id)
),
names_of as (
    select entity_id, list(alias order by alias) as names
    from entity_aliases
    where entity_id in (select id from keys where kind = 'answer')
    group by entity_id
),
hashed as (
    select x.entity_id,
           sha256(to_json({'version': $version::varchar, 'max_chars': $max_chars::integer, 'names': n.names,
                           'chunks': list({'id': x.chunk_id, 'hash': x.content_hash, 'ord': x.ord,
                                           'title': x.title, 'crowd': x.n_entities} order by x.chunk_id)}))
               as input_hash
    from candidates x
    join names_of n using (entity_id)
    group by x.entity_id, n.names
)
select h.entity_id, h.input_hash
from hashed h
left join entity_answers a using (entity_id)
where a.input_hash is distinct from h.input_hash
