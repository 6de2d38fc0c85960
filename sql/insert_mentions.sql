-- Bulk rows for mentions, read back from the NDJSON file pipelines.db.insert wrote.
insert or ignore into mentions by name
select * from read_json($path, format = 'newline_delimited',
    columns = {entity_id: 'varchar', chunk_id: 'varchar'})
