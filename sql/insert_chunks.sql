-- Bulk rows for chunks, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into chunks by name
select unnest(chunk_id) as chunk_id, unnest(doc_id) as doc_id, unnest(ord) as ord, unnest(text) as text,
       unnest(n_tokens) as n_tokens, unnest(content_hash) as content_hash
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {chunk_id: 'varchar[]', doc_id: 'varchar[]', ord: 'integer[]', text: 'varchar[]',
               n_tokens: 'integer[]', content_hash: 'varchar[]'})
