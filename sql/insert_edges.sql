-- Bulk rows for edges, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line (tests and benchmarks).
insert into edges by name
select unnest(src) as src, unnest(dst) as dst, unnest(weight) as weight, unnest(rank) as rank
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {src: 'varchar[]', dst: 'varchar[]', weight: 'integer[]', rank: 'integer[]'})
