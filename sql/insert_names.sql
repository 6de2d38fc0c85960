-- Bulk rows for names, read back from the NDJSON file pipelines.db.insert wrote.
insert into names by name
select * from read_json($path, format = 'newline_delimited',
    columns = {entity_id: 'varchar', name: 'varchar', weight: 'integer'})
