-- Chunks whose folded text matches $pattern (RE2: each changed name's tokens with optional white
-- space between them), with their text: a superset of the chunks where those names occur.
select c.chunk_id, c.text
from chunk_folded f
join chunks c using (chunk_id)
where regexp_matches(f.folded, $pattern)
order by c.chunk_id
