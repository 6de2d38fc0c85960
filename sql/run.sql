-- Statements of pipelines.run: the run's change log and the stored settings (index_state).

-- name: clear_changed
-- Empty the change log (the temporary table `changed`).
delete from changed;

-- name: state
-- Every stored setting.
select key, value from index_state;

-- name: state_insert
-- A new setting.
insert into index_state values ($key, $value);

-- name: state_update
-- A changed setting.
update index_state set value = $value where key = $key;

-- name: scratch_tables
-- The temporary tables of the connection: a stage's scratch relations, dropped once it is done.
select table_name
from duckdb_tables()
where temporary
order by table_name

-- name: drop_scratch
-- Drop the temporary table {table} (a name pipelines.db.tables lists: DROP takes no parameters).
drop table if exists temp.main.{table}
