-- Bulk rows for names, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into names by name
select unnest(entity_id) as entity_id, unnest(name) as name, unnest(weight) as weight
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {entity_id: 'varchar[]', name: 'varchar[]', weight: 'integer[]'})
