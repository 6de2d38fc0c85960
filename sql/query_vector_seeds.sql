-- Vector seeds: the $limit entities whose vector ("label: short answer") is closest to the question's
-- $vector by cosine, at least $floor, most similar first (then by id). Only entities whose answer
-- cites a chunk the caller may read ($scopes: null = any), since the vector was made from that text.
select e.entity_id, e.label, e.n_chunks, list_cosine_similarity(v.vector, $vector::float[]) as similarity
from entity_vectors v
join entities e using (entity_id)
join entity_answers a using (entity_id)
join chunks c on c.chunk_id = a.evidence_ref
join documents d on d.doc_id = c.doc_id
where list_cosine_similarity(v.vector, $vector::float[]) >= $floor
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
order by similarity desc, e.entity_id
limit $limit
