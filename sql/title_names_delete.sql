-- Mode titles: forget the tokens of titles that no document has any more.
delete from title_names where title not in (select title from documents)
