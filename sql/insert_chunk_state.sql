-- Bulk rows for chunk_state, read back from the NDJSON file pipelines.db.insert wrote.
insert or replace into chunk_state by name
select * from read_json($path, format = 'newline_delimited',
    columns = {chunk_id: 'varchar', mention_hash: 'varchar'})
