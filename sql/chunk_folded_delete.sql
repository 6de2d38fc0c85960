-- Forget the folded text of chunks that are gone.
delete from chunk_folded where chunk_id not in (select chunk_id from chunks)
