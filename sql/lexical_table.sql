-- The chunks a BM25 index is built over (an in-memory copy of the index's chunks, with their scope).
create or replace table search_chunks (
    chunk_id varchar primary key, doc_id varchar, scope varchar, text varchar, n_tokens integer
)
