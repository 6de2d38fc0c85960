-- Bulk rows for mentions, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into mentions by name
select unnest(entity_id) as entity_id, unnest(chunk_id) as chunk_id, unnest(windows) as windows
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {entity_id: 'varchar[]', chunk_id: 'varchar[]', windows: 'integer[][]'})
