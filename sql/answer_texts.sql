-- The text of every candidate chunk of the entities in answer_todo, each chunk once.
select chunk_id, text
from chunks
where chunk_id in (select unnest(chunks).id from answer_todo)
