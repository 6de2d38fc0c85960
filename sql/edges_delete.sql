-- Delete the edges from entities in keys 'src' whose weight or rank changed, or that no longer exist.
delete from edges e
where e.src in (select id from keys where kind = 'src')
  and not exists (
    select 1 from edges_next n
    where n.src = e.src and n.dst = e.dst and n.weight = e.weight and n.rank = e.rank
)
