-- Chunks whose entity candidates (mode nlp) are not stored yet, or were found under another title of
-- their document, with the document's current title.
select c.chunk_id, c.text, d.title
from chunks c
join documents d using (doc_id)
left join chunk_candidates x on x.chunk_id = c.chunk_id
where x.chunk_id is null or x.title is distinct from d.title
order by c.chunk_id
