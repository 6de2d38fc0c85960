-- Statements of pipelines.shards: a stage's per-document work written out in shards, made elsewhere, read back.

-- name: number
-- The scratch relation shard_parts: the rows of shard_input (shard_key, seq, then the work's input columns), each
-- with the number of its shard, $size keys a shard in key order.
create or replace temp table shard_parts as
select (dense_rank() over (order by shard_key) - 1) // $size as shard, *
from shard_input;

-- name: count
-- How many shards shard_parts holds.
select coalesce(max(shard) + 1, 0) from shard_parts;

-- name: part
-- The input rows of shard $k, in key and sequence order, written to the Parquet file $path.
copy (select * exclude (shard, shard_key, seq) from shard_parts where shard = $k order by shard_key, seq)
to $path (format parquet);

-- name: done
-- The scratch relation of the shards' inputs, once written out (a stage's own go when it ends).
drop table if exists shard_parts;

-- name: inputs
-- A shard's input rows, in order (on the worker).
select * from read_parquet($path);

-- name: write
-- A shard's rows, from the lines pipelines.bulk.write_lines wrote to $path ($columns: each column's type as a
-- list), written to the Parquet file $out (on the worker).
copy (
    select unnest(columns(*))
    from read_json($path, format = 'newline_delimited', maximum_object_size = $longest, columns = $columns)
) to $out (format parquet);

-- name: merge
-- The rows of the shards' files $paths into {table}, in shard order (by the writer). {conflict} is empty, or "or
-- replace" where a row replaces the stored one with its key.
insert {conflict} into {table} by name
select * from read_parquet($paths);
