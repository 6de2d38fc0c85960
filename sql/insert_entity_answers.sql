-- Bulk rows for entity_answers, read back from the NDJSON file pipelines.db.insert wrote.
insert or replace into entity_answers by name
select * from read_json($path, format = 'newline_delimited', maximum_object_size = 1000000000,
    columns = {entity_id: 'varchar', answer: 'varchar', evidence_ref: 'varchar', input_hash: 'varchar'})
