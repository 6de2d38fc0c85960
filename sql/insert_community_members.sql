-- Bulk rows for community_members, read back from the NDJSON file pipelines.db.insert wrote.
insert into community_members by name
select * from read_json($path, format = 'newline_delimited',
    columns = {community_id: 'varchar', entity_id: 'varchar', centrality: 'integer'})
