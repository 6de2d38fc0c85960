-- Communities per hierarchy level, with their sizes.
select level, count(*) as communities, min(n_members) as min_members, max(n_members) as max_members,
       round(avg(n_members), 2) as mean_members
from communities
group by level
order by level
