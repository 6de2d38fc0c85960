-- Delete the reports about to be written again (keys 'community') and those of communities that are gone.
delete from community_reports
where community_id in (select id from keys where kind = 'community')
   or community_id not in (select community_id from communities)
