-- The members a community report lists, most central first, each with its short answer.
select cm.community_id, cm.entity_id, e.label, a.answer, a.evidence_ref
from community_members cm
join entities e using (entity_id)
join entity_answers a using (entity_id)
where cm.centrality <= $max_lines
order by cm.community_id, cm.centrality
