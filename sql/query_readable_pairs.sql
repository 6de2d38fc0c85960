-- For each pair ($a[i], $b[i]) of entities, the chunks the caller may read ($scopes) that mention
-- both: an edge is shown only through text its reader may see.
with pairs as (
    select unnest($a::varchar[]) as a, unnest($b::varchar[]) as b
)
select p.a, p.b, count(distinct m1.chunk_id)::integer as shared
from pairs p
join mentions m1 on m1.entity_id = p.a
join mentions m2 on m2.chunk_id = m1.chunk_id and m2.entity_id = p.b
join chunks c on c.chunk_id = m1.chunk_id
join documents d on d.doc_id = c.doc_id
where $scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope)
group by p.a, p.b
