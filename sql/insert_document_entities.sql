-- Bulk rows for document_entities, read back from the NDJSON file pipelines.db.insert wrote.
insert or ignore into document_entities by name
select * from read_json($path, format = 'newline_delimited',
    columns = {doc_id: 'varchar', label: 'varchar', entity_id: 'varchar'})
