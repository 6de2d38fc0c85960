-- Forget the state of chunks that went, and of the chunks just matched whose state is recorded again
-- (chunk_state_update): a delete and an insert cost less than DuckDB's insert-or-replace.
delete from chunk_state
where chunk_id not in (select chunk_id from chunks)
   or chunk_id in (select chunk_id from mention_expected where chunk_id in (select id from keys where kind = 'chunk'))
