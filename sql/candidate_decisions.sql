-- Modes nlp and spacy: the stored decisions (candidate_decisions) about the candidates $ids (entity ids),
-- or, with $ids null, about the $top candidates seen in most chunks; with $rejected, only those not kept.
select entity_id, name, kept, reason, canonical, n_chunks, n_lower, n_mid, n_other, lowercase
from candidate_decisions
where ($ids::varchar[] is null or list_contains($ids::varchar[], entity_id))
  and (not $rejected or not kept)
order by n_chunks desc, entity_id
limit $top
