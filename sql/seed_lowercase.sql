-- Modes nlp and spacy: the entities a question names even when it writes their name in lower case: the
-- corpus seldom writes the name's word in lower case (candidate_decisions.lowercase).
select entity_id
from candidate_decisions
where kept and lowercase and reason = 'entity'
order by entity_id
