-- Bulk rows for search_chunks, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into search_chunks by name
select unnest(chunk_id) as chunk_id, unnest(doc_id) as doc_id, unnest(text) as text, unnest(n_tokens) as n_tokens
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {chunk_id: 'varchar[]', doc_id: 'varchar[]', text: 'varchar[]', n_tokens: 'integer[]'})
