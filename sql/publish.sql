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
