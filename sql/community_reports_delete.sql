-- Delete the reports about to be written again (report_todo) and those of communities that are gone.
delete from community_reports
where community_id in (select community_id from report_todo)
   or community_id not in (select community_id from communities)
