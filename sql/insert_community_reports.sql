-- Bulk rows for community_reports, read back from the NDJSON file pipelines.db.insert wrote.
insert or replace into community_reports by name
select * from read_json($path, format = 'newline_delimited', maximum_object_size = 1000000000,
    columns = {community_id: 'varchar', report: 'varchar', evidence_refs: 'varchar[]', input_hash: 'varchar'})
