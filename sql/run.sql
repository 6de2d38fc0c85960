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
