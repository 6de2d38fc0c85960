-- Delete the lines of reports about to be written again (report_todo) or gone.
delete from report_lines
where community_id in (select community_id from report_todo)
   or community_id not in (select community_id from communities)
