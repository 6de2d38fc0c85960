-- The readable chunks a BM25 index is built over (an in-memory copy of the index's chunks).
create or replace table search_chunks (chunk_id varchar primary key, doc_id varchar, text varchar, n_tokens integer)
