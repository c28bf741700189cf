"""The snapshot's stored tables (``tldr/``, ``sentences/``, ``references/``) as serving reads them.

The build writes them (`openxiv.indexer.building.tldrs`, `.sentences`, `.references`); the snapshot
and the service read them through these modules, so serving never imports the build. Each module
holds its table's file names, its rules version and its reader; the build's writer imports them.
"""
