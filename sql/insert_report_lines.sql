-- Bulk rows for report_lines, read back from the NDJSON file pipelines.db.insert wrote.
insert into report_lines by name
select * from read_json($path, format = 'newline_delimited', maximum_object_size = 1000000000,
    columns = {community_id: 'varchar', ord: 'integer', entity_id: 'varchar', text: 'varchar',
               evidence_ref: 'varchar'})
