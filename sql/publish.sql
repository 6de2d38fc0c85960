-- Publishing (pipelines.publish): the staging copy's last statements.

-- name: checkpoint
-- Write the staging copy's changes into its file.
checkpoint;

-- name: blocks
-- The blocks of the connection's database file that hold data (deleted rows included), and those a checkpoint
-- left free.
select used_blocks, free_blocks from pragma_database_size() where database_name = current_database();

-- name: tables
-- The tables of the connection's database and the rows each stores, the deleted ones a checkpoint kept included.
select table_name, estimated_size from duckdb_tables() where database_name = current_database() order by table_name;

-- name: live_rows
-- The rows of the table $table that are not deleted.
select count(*) from query_table($table);

-- name: table_blocks
-- The data blocks of the table $table.
select count(distinct block_id) from pragma_storage_info($table) where block_id >= 0;

-- name: use_compact
-- Create what follows in the attached database `compact` (pipelines.publish._compact).
use compact;

-- name: unstamp
-- Empty the index_state of the attached database `compact`, new: `compact` copies the rows of `wasteful`'s, its
-- index format among them (pipelines.db.FORMAT), where it has one.
delete from compact.index_state;

-- name: unknown_tables
-- The definitions of the tables of the attached database `wasteful` that `compact` lacks: none the schema makes.
select sql
from duckdb_tables() w
where w.database_name = 'wasteful'
  and not exists (select 1 from duckdb_tables() c where c.database_name = 'compact' and c.table_name = w.table_name)
order by w.table_name;

-- name: unknown_indexes
-- The definitions of the indexes of the attached database `wasteful` that `compact` lacks: none the schema makes.
select sql
from duckdb_indexes() w
where w.database_name = 'wasteful'
  and not exists (select 1 from duckdb_indexes() c where c.database_name = 'compact' and c.index_name = w.index_name)
order by w.index_name;

-- name: compact
-- The rows of every table of the attached database `wasteful` written into the attached database `compact`,
-- new with the schema's tables (pipelines.publish._compact): without the blocks a checkpoint left free, and
-- without the rows it kept deleted.
copy from database wasteful to compact (data);

-- name: last_run
-- What the published index was last built from (the documents stage's source fingerprint, '' when it was not
-- one JSONL file), how many documents it holds, and its last run's settings (null before any run).
select coalesce((select value from index_state where key = 'source'), ''),
       (select count(*) from documents),
       (select settings from index_runs where status = 'ok' order by started_at desc, run_id desc limit 1);
