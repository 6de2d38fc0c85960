-- Stage chunk_vectors (pipelines.chunk_vectors): an embedding of each chunk's text.

-- name: chunks
-- How many chunks the index holds.
select count(*) from chunks;

-- name: delete_all
-- Without an embedder: delete every vector, returning their chunk ids.
delete from chunk_vectors returning chunk_id;

-- name: todo
-- The chunks whose vector must be made (again), with their text and its hash under $setting (version and
-- model): those with no vector, or one made from other text or by another model; in chunk id order.
with hashed as (
    select chunk_id, text, sha256(to_json({'setting': $setting::varchar, 'text': content_hash})) as input_hash
    from chunks
)
select h.chunk_id, h.text, h.input_hash
from hashed h
left join chunk_vectors v using (chunk_id)
where v.input_hash is distinct from h.input_hash
order by h.chunk_id;

-- name: delete_gone
-- Delete the vectors of chunks that are gone; how many.
delete from chunk_vectors where chunk_id not in (select chunk_id from chunks);

-- name: delete_stale
-- Delete the vectors of the chunks $ids, about to be made again.
delete from chunk_vectors where chunk_id in (select unnest($ids::varchar[]));
