-- Bulk rows for entity_aliases, read back from the NDJSON file pipelines.db.insert wrote.
insert or ignore into entity_aliases by name
select * from read_json($path, format = 'newline_delimited',
    columns = {entity_id: 'varchar', alias: 'varchar'})
