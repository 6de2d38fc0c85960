"""The query side: a question in, routed and token-budgeted context out (`pipelines.query.context.Index`).

It reads an index file through its own SQL (sql/query.sql; a scope's edges by the edges stage's own statement,
edges.ranked) and shares with the stages only text utilities (pipelines.names, matcher, sentences, candidates,
answer_choice, report_lines, stopwords), what they store (pipelines.layout) and the typed settings they store
(pipelines.settings), so that it never imports a stage.
"""
