-- Bulk rows for rejected, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into rejected by name
select unnest(source) as source, unnest(line) as line, unnest(doc_id) as doc_id, unnest(reason) as reason,
       unnest(detail) as detail
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {source: 'varchar[]', line: 'integer[]', doc_id: 'varchar[]', reason: 'varchar[]',
               detail: 'varchar[]'})
