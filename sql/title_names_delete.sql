-- Mode titles: forget the tokens of names that no document has any more (sql/document_names.sql).
delete from title_names where title not in (select name from document_names)
