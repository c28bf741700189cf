"""A Semantic Scholar-compatible API over the same snapshot (issue 41, item 4).

Agents written against the Semantic Scholar Graph API (PaperQA's metadata clients, LangChain's
Semantic Scholar tool, the ``semanticscholar`` client library) reach openxiv by changing their base
URL only: `openxiv.service.http.routes_s2` serves ``/graph/v1/...`` and ``/recommendations/v1/...``
with the S2 shapes, and these modules are the use cases behind them: `ids` (S2 paper ids to arXiv
ids and back), `fields` (the ``fields=`` vocabulary and a paper rendered in it) and `api` (search,
title match, paper, batch, references, citations, recommendations, snippet search), each over the
service's own use cases (`openxiv.service.search`, `openxiv.service.references`,
`openxiv.service.similar`, `openxiv.service.passages`, `openxiv.service.navigation`).
"""
