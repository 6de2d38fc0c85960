-- Bulk rows for documents, read back from the NDJSON file pipelines.db.insert wrote.
insert into documents by name
select * from read_json($path, format = 'newline_delimited', maximum_object_size = 1000000000,
    columns = {doc_id: 'varchar', title: 'varchar', text: 'varchar', scope: 'varchar', metadata: 'json',
               source: 'varchar', line: 'integer', record_hash: 'varchar', content_hash: 'varchar',
               n_tokens: 'integer', n_chunks: 'integer'})
