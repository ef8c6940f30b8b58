"""Plain tables, below every floor that makes one: a table as columns of values, the ids of
its rows in natural order, the text of a number in a cell, and the table as a pandas
DataFrame or as a small HTML table for notebooks.

Holds the columns and the row order (:mod:`.columns`), numbers written for a cell
(:mod:`.cells`), DataFrames and Parquet with the optional pandas extra (:mod:`.frames`)
and static HTML tables (:mod:`.html`). The floors that own a run, a comparison or a gate
build their columns and call these; none of them knows those objects.

May import: io (the safe writes of Parquet files).
"""
