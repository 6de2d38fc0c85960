-- Bulk rows for the scratch table names_next, read back from the file pipelines.db.insert wrote: one
-- JSON object of column lists per line.
insert into names_next by name
select unnest(entity_id) as entity_id, unnest(name) as name, unnest(weight) as weight, unnest(words) as words
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {entity_id: 'varchar[]', name: 'varchar[]', weight: 'integer[]', words: 'varchar[]'})
