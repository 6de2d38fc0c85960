-- Bulk rows for run_stages, read back from the NDJSON file pipelines.db.insert wrote.
insert into run_stages by name
select * from read_json($path, format = 'newline_delimited',
    columns = {run_id: 'varchar', ord: 'integer', stage: 'varchar', rows_read: 'bigint', rows_reused: 'bigint',
               rows_recomputed: 'bigint', rows_removed: 'bigint', detail: 'json', seconds: 'double'})
