-- Bulk rows for the temporary table places, read back from the NDJSON file pipelines.db.insert wrote.
insert into places by name
select * from read_json($path, format = 'newline_delimited',
    columns = {doc_id: 'varchar', source: 'varchar', line: 'integer', record_hash: 'varchar'})
