-- Bulk rows for the temporary table places, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into places by name
select unnest(doc_id) as doc_id, unnest(source) as source, unnest(line) as line, unnest(record_hash) as record_hash
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {doc_id: 'varchar[]', source: 'varchar[]', line: 'integer[]', record_hash: 'varchar[]'})
