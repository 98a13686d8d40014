"""pyqtgraph plots, one per module: items are created once and updated in place with
setOpts/setData; `export` writes any of them (or a table) as PNG or SVG."""
