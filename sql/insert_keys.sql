-- Bulk rows for the temporary table keys, read back from the NDJSON file pipelines.db.insert wrote.
insert into keys by name
select * from read_json($path, format = 'newline_delimited', columns = {kind: 'varchar', id: 'varchar'})
