-- Community reports at $level (or the communities $ids when given) as readable lines: each line of
-- a report whose cited chunk the caller may read ($scopes), with the community's title, weight and
-- member labels for matching against the question.
select c.community_id, c.title, c.weight, l.ord, l.text, l.evidence_ref,
       (select list(e.label order by e.label) from community_members cm join entities e using (entity_id)
        where cm.community_id = c.community_id) as labels,
       r.evidence_refs
from communities c
join community_reports r using (community_id)
join report_lines l using (community_id)
join chunks ch on ch.chunk_id = l.evidence_ref
join documents d on d.doc_id = ch.doc_id
where (($ids::varchar[] is null and c.level = $level) or list_contains($ids::varchar[], c.community_id))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
order by c.community_id, l.ord
