-- Entities within $hops hops of $seeds over `edges`, following only each entity's $cap strongest
-- neighbours (rank <= $cap; null = no cap). Breadth-first: every entity appears once, at its
-- smallest depth, with one provenance path (a list of entity ids, so any character is safe).
-- Path rule among equally short ones: the heavier last edge wins, then the smaller parent path
-- (lists compare element by element). USING KEY keeps one row per entity across iterations, and
-- `recurring.walk` (everything reached so far) stops revisits, so paths never explode.
with recursive walk (entity, depth, path, weight) using key (entity) as (
    select seed, 0, [seed], null::integer
    from (select distinct unnest($seeds::varchar[]) as seed)
    union
    select e.dst, w.depth + 1, list_append(w.path, e.dst), e.weight
    from walk w
    join edges e on e.src = w.entity
    where w.depth < $hops
      and ($cap::integer is null or e.rank <= $cap::integer)
      and e.dst not in (select entity from recurring.walk)
    qualify row_number() over (partition by e.dst order by e.weight desc, w.path) = 1
)
select entity, depth, path, weight
from walk
order by depth, entity
