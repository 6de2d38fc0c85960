-- Community reports at $level (or the communities $ids when given) as readable lines: each line of
-- a report whose cited chunk the caller may read ($scopes), with the member's label for matching
-- against the question, the community's title and weight, the member and its answer (for a scoped
-- caller, who sees a line under its own label for the member), and the whole stored report (its
-- summary: central members and key evidence sentences, each citing a chunk).
select c.community_id, c.title, c.weight, l.text, l.evidence_ref, e.label, l.entity_id, a.answer, r.report
from communities c
join community_reports r using (community_id)
join report_lines l using (community_id)
join entities e on e.entity_id = l.entity_id
join entity_answers a on a.entity_id = l.entity_id
join chunks ch on ch.chunk_id = l.evidence_ref
join documents d on d.doc_id = ch.doc_id
where (($ids::varchar[] is null and c.level = $level) or list_contains($ids::varchar[], c.community_id))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
order by c.community_id, l.ord
