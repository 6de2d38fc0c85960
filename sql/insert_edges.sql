-- Bulk rows for edges, read back from the NDJSON file pipelines.db.insert wrote (tests and benchmarks).
insert into edges by name
select * from read_json($path, format = 'newline_delimited',
    columns = {src: 'varchar', dst: 'varchar', weight: 'integer', rank: 'integer'})
