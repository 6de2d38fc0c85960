-- The text of every supporting chunk of the reports about to be written (report_todo.refs), from which
-- their key evidence sentences are taken.
select c.chunk_id, c.text
from chunks c
where c.chunk_id in (select unnest(refs) from report_todo)
order by c.chunk_id
