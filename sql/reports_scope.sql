-- Into keys 'report': the communities whose report may have to be written again. Every community
-- with $full; otherwise those whose rows were rewritten and those with a member whose mentions,
-- names or answer changed (the run's change log). report_todo keeps those whose hash changed.
insert into keys
select 'report', community_id
from communities
where $full
   or community_id in (select id from changed where kind = 'community')
   or community_id in (select community_id from community_members
                       where entity_id in (select id from changed where kind in ('entity', 'answer')))
