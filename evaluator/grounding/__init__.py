"""The grounding check (`openxiv eval grounding`, docs/evaluator.md «Grounding check»): quotes of an
answer looked for in the stored text of the papers they are credited to, without an LLM.

`claims` reads quotes and citations out of text, `inputs` the answer files, `text` finds a span in a
paper (exact, normalised, fuzzy), `check` gives verdicts, `report` the report and its evidence HTML,
`planted` a planted answer set with known verdicts, `cli` the command.
"""
