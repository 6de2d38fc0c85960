-- The graph's total edge weight, each co-occurring pair once (what a partial graph's modularity is
-- scaled by).
select coalesce(sum(weight), 0)
from (
    select distinct least(src, dst) as a, greatest(src, dst) as b, weight
    from edges
    where src <> dst
)
