-- Whether the open database holds an acervo index: the tables every index has (documents, index_state).
select count(*) = 2 from duckdb_tables()
where database_name = current_database() and not temporary and table_name in ('documents', 'index_state')
