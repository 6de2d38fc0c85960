-- Every table of the attached database `wasteful` rewritten into the empty attached database `compact`
-- (pipelines.publish.compacted): rows, keys and constraints, without the blocks a checkpoint left free.
copy from database wasteful to compact;
