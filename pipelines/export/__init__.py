"""`acervo export`: a published index in the files other tools read (GraphML, GEXF, Parquet, Neo4j import CSVs),
never with more than the caller's scopes may read."""
