-- Statements of pipelines.stage that every hash-invalidated stage runs alike. {table} is the stage's table,
-- {key} its id column, {todo} the scratch relation of its todo rows (made by its own file's `todo`) and
-- {source} the table it writes a row for each row of: identifiers its description (`Hashed`) names, never
-- values.

-- name: replaced
-- How many stored rows the todo rows are about to replace.
select count(*) from {table} where {key} in (select {key} from {todo});

-- name: delete
-- Delete the rows about to be made again and those whose source row is gone; returns how many.
delete from {table}
where {key} in (select {key} from {todo})
   or {key} not in (select {key} from {source});
