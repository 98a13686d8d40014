"""Table and tree models: thin adapters over core records, one model per module.

`table.TableModel` is the shared base (column constants, `RAW_ROLE` for sorting and
plotting, `ID_ROLE` for the row's memory id); `format` turns records into cell text.
"""
