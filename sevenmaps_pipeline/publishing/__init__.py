"""What the pipeline publishes from built and signed days: one day of the map read as a whole (mapday.py),
tool-list locks, the status page and badges, charts, the static site, and researchers' snapshots
(export.py). Plain library code over the lake and the integrity layer; surfaces/ and the CLI call it
(docs/development.md, "Layers")."""
