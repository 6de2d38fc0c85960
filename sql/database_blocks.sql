-- The blocks of the connection's database file that hold data, and those a checkpoint left free.
select used_blocks, free_blocks from pragma_database_size() where database_name = current_database();
