"""Checks that a doc's code block quotes a source file verbatim: the first fenced block after MARKER in
DOC, minus its "/* ... */" elision lines, must appear in SOURCE as one contiguous piece.
  check_doc_excerpt.py DOC MARKER SOURCE
"""
import sys

doc, marker, source = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(doc, encoding="utf-8").read()
at = text.find(marker)
if at < 0:
    sys.exit(f"{doc}: marker {marker!r} not found")
fence = text.index("```", at)
body_start = text.index("\n", fence) + 1
block = text[body_start:text.index("```", body_start)]
excerpt = "".join(line for line in block.splitlines(keepends=True) if not line.startswith("/* ..."))
if not excerpt.strip():
    sys.exit(f"{doc}: the block after {marker!r} is empty")
if excerpt not in open(source, encoding="utf-8").read():
    sys.exit(f"{doc}: the block after {marker!r} is not a verbatim excerpt of {source}")
print(f"ok: {doc} quotes {source} ({len(excerpt.splitlines())} lines)")
