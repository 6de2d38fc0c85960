-- Bulk rows for documents, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into documents by name
select unnest(doc_id) as doc_id, unnest(title) as title, unnest(text) as text, unnest(scope) as scope,
       unnest(metadata) as metadata, unnest(source) as source, unnest(line) as line,
       unnest(record_hash) as record_hash, unnest(content_hash) as content_hash, unnest(n_tokens) as n_tokens,
       unnest(n_chunks) as n_chunks
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {doc_id: 'varchar[]', title: 'varchar[]', text: 'varchar[]', scope: 'varchar[]', metadata: 'json[]',
               source: 'varchar[]', line: 'integer[]', record_hash: 'varchar[]', content_hash: 'varchar[]',
               n_tokens: 'integer[]', n_chunks: 'integer[]'})
