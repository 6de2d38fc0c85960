-- Bulk rows for the temporary table keys, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into keys by name
select unnest(kind) as kind, unnest(id) as id
from read_json($path, format = 'newline_delimited', maximum_object_size = 1000000000,
    columns = {kind: 'varchar[]', id: 'varchar[]'})
