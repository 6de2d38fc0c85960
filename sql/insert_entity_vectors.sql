-- Bulk rows for entity_vectors, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into entity_vectors by name
select unnest(entity_id) as entity_id, unnest(vector) as vector, unnest(input_hash) as input_hash
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {entity_id: 'varchar[]', vector: 'float[][]', input_hash: 'varchar[]'})
