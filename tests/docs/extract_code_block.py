"""Writes the first fenced code block of a language in a Markdown file to OUT, so a test can compile
the docs' example as it is printed.
  extract_code_block.py DOC LANGUAGE OUT
"""
import sys

doc, language, out = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(doc, encoding="utf-8").read()
fence = "```" + language + "\n"
start = text.find(fence)
if start < 0:
    sys.exit(f"{doc}: no {fence.strip()} block")
body_start = start + len(fence)
end = text.find("```", body_start)
if end < 0:
    sys.exit(f"{doc}: the {fence.strip()} block is not closed")
with open(out, "w", encoding="utf-8") as f:
    f.write(f"// Extracted from {doc} by tests/docs/extract_code_block.py: edit the doc, not this file.\n")
    f.write(text[body_start:end])
