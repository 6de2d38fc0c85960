-- Stage entity_vectors (pipelines.vectors): an embedding of each entity's label and short answer.

-- name: read
-- How many entities the index holds.
select count(*) from entities;

-- name: todo
-- Into the scratch relation vector_todo: the entities whose vector must be made again, with the text to
-- embed ("label: short answer") and its hash under $setting (version and model). Every entity with
-- $full; otherwise those whose names or short answer this run changed (the change log).
create or replace temp table vector_todo as
with scoped as (
    select e.entity_id, e.label || ': ' || a.answer as text
    from entities e
    join entity_answers a using (entity_id)
    where $full or e.entity_id in (select id from changed where kind in ('entity', 'answer'))
),
hashed as (
    select entity_id, text, sha256(to_json({'setting': $setting::varchar, 'text': text})) as input_hash
    from scoped
)
select h.entity_id, h.text, h.input_hash
from hashed h
left join entity_vectors v using (entity_id)
where v.input_hash is distinct from h.input_hash;

-- name: todo_rows
-- The entities of vector_todo with the text to embed, in id order.
select entity_id, text, input_hash from vector_todo order by entity_id;

-- name: shard_todo
-- The scratch relation shard_input (pipelines.shards): the rows of `todo_rows`, keyed by id.
create or replace temp table shard_input as
select entity_id as shard_key, 0 as seq, entity_id, text, input_hash from vector_todo;

-- name: delete_all
-- Without an embedder: delete every vector, returning their ids.
delete from entity_vectors returning entity_id;
