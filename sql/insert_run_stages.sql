-- Bulk rows for run_stages, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into run_stages by name
select unnest(run_id) as run_id, unnest(ord) as ord, unnest(stage) as stage, unnest(rows_read) as rows_read,
       unnest(rows_reused) as rows_reused, unnest(rows_recomputed) as rows_recomputed,
       unnest(rows_removed) as rows_removed, unnest(detail) as detail, unnest(seconds) as seconds
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {run_id: 'varchar[]', ord: 'integer[]', stage: 'varchar[]', rows_read: 'bigint[]',
               rows_reused: 'bigint[]', rows_recomputed: 'bigint[]', rows_removed: 'bigint[]', detail: 'json[]',
               seconds: 'double[]'})
