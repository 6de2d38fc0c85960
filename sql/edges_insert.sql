-- Insert the new or changed edges from edges_next.
insert into edges
select n.*
from edges_next n
anti join edges e on n.src = e.src and n.dst = e.dst
order by n.src, n.rank
