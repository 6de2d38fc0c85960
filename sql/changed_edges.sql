-- Log the entities whose incident edges changed (an edge appeared, vanished or changed weight; a
-- rank alone does not count): run before edges_delete, while `edges` still holds the old rows.
insert into changed
select distinct 'edge', coalesce(n.src, e.src)
from (select src, dst, weight from edges where src in (select id from keys where kind = 'src')) e
full join edges_next n on n.src = e.src and n.dst = e.dst
where e.weight is distinct from n.weight
