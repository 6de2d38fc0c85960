"""The query side: a question in, routed and token-budgeted context out (`pipelines.query.context.Index`).

It reads an index file through its own SQL (sql/query.sql) and shares only text utilities with the stages
(pipelines.names, matcher, sentences, candidates, answer_choice, report_lines, stopwords), so that it never imports
a stage.
"""
