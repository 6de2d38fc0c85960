-- Bulk rows for chunk_candidates, read back from the NDJSON file pipelines.db.insert wrote.
insert or replace into chunk_candidates by name
select * from read_json($path, format = 'newline_delimited', maximum_object_size = 1000000000,
    columns = {chunk_id: 'varchar', title: 'varchar', names: 'struct(entity_id varchar, name varchar)[]',
               acronyms: 'struct(acronym varchar, expansion varchar)[]'})
