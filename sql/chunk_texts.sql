-- Every chunk's text with its document's title, for matching entity names.
select c.chunk_id, c.text, d.title
from chunks c
join documents d using (doc_id)
order by c.chunk_id
