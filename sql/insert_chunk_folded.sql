-- Bulk rows for chunk_folded, read back from the NDJSON file pipelines.db.insert wrote.
insert into chunk_folded by name
select * from read_json($path, format = 'newline_delimited', maximum_object_size = 1000000000,
    columns = {chunk_id: 'varchar', folded: 'varchar'})
