-- Chunks whose entity candidates (mode nlp) are not stored yet.
select c.chunk_id, c.text
from chunks c
anti join chunk_candidates x using (chunk_id)
order by c.chunk_id
