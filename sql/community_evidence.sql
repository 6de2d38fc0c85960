-- Each community's supporting chunks: those that mention the most members first, then by chunk_id;
-- the first $k are a report's evidence_refs.
with counts as (
    select cm.community_id, m.chunk_id, count(*) as n_members
    from community_members cm
    join mentions m using (entity_id)
    group by all
),
ranked as (
    select community_id, chunk_id,
           row_number() over (partition by community_id order by n_members desc, chunk_id) as place
    from counts
    qualify place <= $k
)
select r.community_id,
       list(r.chunk_id order by r.place) as refs,
       list(c.content_hash order by r.place) as hashes
from ranked r
join chunks c using (chunk_id)
group by r.community_id
order by r.community_id
