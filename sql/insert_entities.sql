-- Bulk rows for entities, read back from the NDJSON file pipelines.db.insert wrote.
insert into entities by name
select * from read_json($path, format = 'newline_delimited',
    columns = {entity_id: 'varchar', label: 'varchar', n_chunks: 'integer', degree: 'integer'})
