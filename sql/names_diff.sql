-- The (entity_id, name) pairs whose weight differs between the stored dictionary (names) and this
-- run's (names_next); `moved` when the pair entered or left it (only those can match differently),
-- `entered` when it is new.
select coalesce(x.entity_id, p.entity_id) as entity_id, coalesce(x.name, p.name) as name,
       x.weight is null or p.weight is null as moved, p.weight is null as entered
from names_next x
full join names p on p.entity_id = x.entity_id and p.name = x.name
where x.weight is distinct from p.weight
order by all
