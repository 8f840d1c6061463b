# The plain keyword baseline every set is compared with: SQLite FTS5 (porter tokenizer), bm25, the query as an
# OR of its non-stopword terms. Reads {"docs": [{key, project, text}], "queries": [{q, project}]} on stdin and
# writes one ranked key list (top 10) per query as JSON. Deliberately nothing clever.
import json, re, sqlite3, sys

STOP = set("""a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here hers herself
him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who whom why will with would you
your yours yourself yourselves""".split())

data = json.load(sys.stdin)
db = sqlite3.connect(":memory:")
db.execute("CREATE VIRTUAL TABLE d USING fts5(text, project UNINDEXED, key UNINDEXED, tokenize='porter unicode61')")
db.executemany("INSERT INTO d (text, project, key) VALUES (?, ?, ?)", [(x["text"], x["project"], x["key"]) for x in data["docs"]])
out = []
for q in data["queries"]:
    terms = [t for t in re.findall(r"\w+", q["q"].lower()) if t not in STOP] or re.findall(r"\w+", q["q"].lower())
    if not terms:
        out.append([]); continue
    match = " OR ".join('"%s"' % t for t in dict.fromkeys(terms))
    if q.get("project") is None:
        rows = db.execute("SELECT key FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT 10", (match,))
    else:
        rows = db.execute("SELECT key FROM d WHERE d MATCH ? AND project = ? ORDER BY bm25(d) LIMIT 10", (match, q["project"]))
    out.append([r[0] for r in rows])
json.dump(out, sys.stdout)
