-- Stage chunk_vectors (pipelines.chunk_vectors): an embedding of each chunk's text.

-- name: read
-- How many chunks the index holds.
select count(*) from chunks;

-- name: todo
-- Into the scratch relation chunk_vector_todo: the chunks whose vector must be made (again), with their text
-- and its hash under $setting (version and model): those with no vector, or one made from other text or by
-- another model.
create or replace temp table chunk_vector_todo as
with hashed as (
    select chunk_id, text, sha256(to_json({'setting': $setting::varchar, 'text': content_hash})) as input_hash
    from chunks
)
select h.chunk_id, h.text, h.input_hash
from hashed h
left join chunk_vectors v using (chunk_id)
where v.input_hash is distinct from h.input_hash;

-- name: todo_rows
-- The chunks of chunk_vector_todo with the text to embed, in chunk id order.
select chunk_id, text, input_hash from chunk_vector_todo order by chunk_id;

-- name: shard_todo
-- The scratch relation shard_input (pipelines.shards): the rows of `todo_rows`, keyed by id.
create or replace temp table shard_input as
select chunk_id as shard_key, 0 as seq, chunk_id, text, input_hash from chunk_vector_todo;

-- name: delete_all
-- Without an embedder: delete every vector, returning their chunk ids.
delete from chunk_vectors returning chunk_id;
