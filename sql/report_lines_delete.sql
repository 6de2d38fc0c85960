-- Delete the report lines of reports about to be written again (keys 'community') or gone.
delete from report_lines
where community_id in (select id from keys where kind = 'community')
   or community_id not in (select community_id from communities)
