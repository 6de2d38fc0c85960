-- How many of the tables every acervo index holds this database has (2 in an index; pipelines.publish).
select count(*) from duckdb_tables()
where database_name = current_database() and not temporary and table_name in ('documents', 'index_state');
