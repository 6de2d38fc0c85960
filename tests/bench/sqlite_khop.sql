-- The comparison baseline (not acervo's SQL): a per-path recursive walk in SQLite, as the design
-- articles' reference code does it: a '|'-joined trail guards cycles per path, and the first row
-- per node by hop wins.
with recursive walk(node, hop, trail) as (
    select :seed, 0, '|' || :seed || '|'
    union all
    select e.dst, w.hop + 1, w.trail || e.dst || '|'
    from walk w
    join edges e on e.src = w.node
    where w.hop < :hops and (:cap is null or e.rank <= :cap) and instr(w.trail, '|' || e.dst || '|') = 0
)
select node, hop from (
    select node, hop, row_number() over (partition by node order by hop) as r from walk
) where r = 1
