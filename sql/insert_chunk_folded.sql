-- Bulk rows for chunk_folded, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into chunk_folded by name
select unnest(chunk_id) as chunk_id, unnest(folded) as folded
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {chunk_id: 'varchar[]', folded: 'varchar[]'})
