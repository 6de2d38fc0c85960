-- The readable documents ($scopes) that hold the chunks $chunk_ids, whole, with all their chunk ids,
-- for direct context.
select d.doc_id, d.title, d.text, d.n_tokens, list(c.chunk_id order by c.ord) as chunk_ids
from documents d
join chunks c using (doc_id)
where d.doc_id in (select doc_id from chunks where chunk_id in (select unnest($chunk_ids::varchar[])))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
group by d.doc_id, d.title, d.text, d.n_tokens
order by d.doc_id
