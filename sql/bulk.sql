-- Statements of pipelines.bulk: many rows into a table in one statement.

-- name: columns
-- The columns of the table $table (of the open database, or a temporary one) with their types.
select column_name, data_type
from duckdb_columns()
where table_name = $table and database_name in (current_database(), 'temp')
order by column_index;

-- name: insert
-- Bulk rows for the table {table}, read back from the file pipelines.bulk.insert wrote: one JSON object of
-- column lists per line, $columns naming each list's type (the column's, as a list). {conflict} is empty,
-- or "or replace" where a row replaces the stored one with its key.
insert {conflict} into {table} by name
select unnest(columns(*))
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest, columns = $columns);
