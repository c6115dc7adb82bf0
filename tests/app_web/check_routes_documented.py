"""Every API route app/web/api_routes.cpp answers is in docs/app.md's route table (`METHOD /route`).

Usage: check_routes_documented.py API_ROUTES_CPP APP_MD"""
import re
import sys

routes = sorted(set(re.findall(r'"(/api/[a-z/]*)"', open(sys.argv[1]).read())))
doc = open(sys.argv[2]).read()
table = re.findall(r"^\| `(?:GET|POST) (/api/[^ `?]*)", doc, re.M)
missing = [r for r in routes if not any(t == r or (r.endswith("/") and t.startswith(r)) for t in table)]
assert routes and not missing, f"routes not in {sys.argv[2]}'s table: {missing}"
print(f"ok: {len(routes)} routes documented")
