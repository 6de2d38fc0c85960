-- Publishing (pipelines.publish): the staging copy's last statements.

-- name: checkpoint
-- Write the staging copy's changes into its file.
checkpoint;

-- name: blocks
-- The blocks of the connection's database file that hold data, and those a checkpoint left free.
select used_blocks, free_blocks from pragma_database_size() where database_name = current_database();

-- name: compact
-- Every table of the attached database `wasteful` rewritten into the empty attached database `compact`
-- (pipelines.publish._compact): rows, keys and constraints, without the blocks a checkpoint left free.
copy from database wasteful to compact;

-- name: last_run
-- What the published index was last built from (the documents stage's source fingerprint, '' when it was not
-- one JSONL file), how many documents it holds, and its last run's settings (null before any run).
select coalesce((select value from index_state where key = 'source'), ''),
       (select count(*) from documents),
       (select settings from index_runs where status = 'ok' order by started_at desc, run_id desc limit 1);

-- name: columns
-- Every table and column of the connection's database (its temporary tables aside).
select table_name, column_name from duckdb_columns() where database_name = current_database();
