-- Bulk rows for chunks, read back from the NDJSON file pipelines.db.insert wrote.
insert into chunks by name
select * from read_json($path, format = 'newline_delimited', maximum_object_size = 1000000000,
    columns = {chunk_id: 'varchar', doc_id: 'varchar', ord: 'integer', text: 'varchar', n_tokens: 'integer',
               content_hash: 'varchar'})
