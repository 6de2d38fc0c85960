-- Whether the open index has candidate_decisions (index files made before it do not).
select count(*) = 1 from duckdb_tables()
where database_name = current_database() and not temporary and table_name = 'candidate_decisions'
