-- Bulk rows for rejected, read back from the NDJSON file pipelines.db.insert wrote.
insert into rejected by name
select * from read_json($path, format = 'newline_delimited',
    columns = {source: 'varchar', line: 'integer', doc_id: 'varchar', reason: 'varchar', detail: 'varchar'})
