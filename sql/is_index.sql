-- Whether the open database holds an acervo index (its run ledger, which every published index has).
select count(*) > 0 from information_schema.tables where table_name = 'index_runs' and table_schema = 'main'
