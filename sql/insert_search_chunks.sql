-- Bulk rows for search_chunks, read back from the NDJSON file pipelines.db.insert wrote.
insert into search_chunks by name
select * from read_json($path, format = 'newline_delimited', maximum_object_size = 1000000000,
    columns = {chunk_id: 'varchar', doc_id: 'varchar', text: 'varchar', n_tokens: 'integer'})
