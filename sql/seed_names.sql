-- Every name that finds an indexed entity in a question, with the entity's label and mention count.
select a.alias, a.entity_id, e.label, e.n_chunks
from entity_aliases a
join entities e using (entity_id)
order by a.entity_id, a.alias
