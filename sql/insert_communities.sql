-- Bulk rows for communities, read back from the NDJSON file pipelines.db.insert wrote.
insert into communities by name
select * from read_json($path, format = 'newline_delimited',
    columns = {community_id: 'varchar', level: 'integer', parent_id: 'varchar', title: 'varchar', weight: 'integer',
               n_members: 'integer', graph_hash: 'varchar'})
