# Sandalyst offline analyst (rule-based, not an LLM), step 3 of 4: check the outputs.
# Reopens the three files: the CSV parses with the expected columns and one row per
# event, the PNG is a real PNG image, the report covers the method and every event in
# the request's language (plain ASCII in English or when asked, else UTF-8). The last line (SANDALYST_VALIDATION) is the verdict as JSON.
import json
import os
import struct

CONFIG = json.loads(__SANDALYST_CONFIG__)
try:  # the findings of the analysis just run (see analyse.py), when it left them
    CONFIG.update(json.load(open(".sandalyst/offline_result.json")))
except (OSError, ValueError):
    pass
OUT = CONFIG["outputs"]
starts = CONFIG.get("event_starts", [])
checks = []


def check(name, fn):
    try:
        ok, detail = fn()
    except Exception as e:  # a failed check is a result, not a crash
        ok, detail = False, "%s: %s" % (type(e).__name__, e)
    checks.append({"name": name, "ok": bool(ok), "detail": str(detail)})


def check_csv():
    import csv

    path = OUT["csv"]
    if not os.path.isfile(path):
        return False, "%s is missing" % path
    raw = open(path, "rb").read()
    raw.decode("ascii")
    rows = list(csv.DictReader(raw.decode("ascii").splitlines()))
    header = next(csv.reader(raw.decode("ascii").splitlines()[:1]), [])
    missing = [c for c in CONFIG.get("columns", []) if c not in header]
    if missing:
        return False, "missing columns: %s" % ", ".join(missing)
    n_events = int(CONFIG.get("n_events", len(starts)))
    if len(rows) != n_events:
        return False, "%d rows, expected %d events" % (len(rows), n_events)
    got = [r.get("start") for r in rows]
    lost = [s for s in starts if s not in got]
    if lost:
        return False, "events not in the table: %s" % ", ".join(lost)
    try:
        import pandas as pd

        pd.read_csv(path)
    except ImportError:
        pass
    return True, "%s: %d event rows, %d columns, ASCII" % (path, len(rows), len(header))


def check_png():
    path = OUT["png"]
    if not os.path.isfile(path):
        return False, "%s is missing" % path
    with open(path, "rb") as fh:
        head = fh.read(33)
    size = os.path.getsize(path)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return False, "%s is not a PNG file" % path
    w, h = struct.unpack(">II", head[16:24])
    if size < 2000 or w < 200 or h < 200:
        return False, "%s looks empty (%d bytes, %dx%d)" % (path, size, w, h)
    return True, "%s: PNG %dx%d, %d bytes" % (path, w, h, size)


def check_report():
    path = OUT["md"]
    if not os.path.isfile(path):
        return False, "%s is missing" % path
    raw = open(path, "rb").read()
    plain = CONFIG.get("plain", True)
    try:
        text = raw.decode("ascii" if plain else "utf-8")
    except UnicodeDecodeError as e:
        return False, "not plain %s (byte %d)" % ("ASCII" if plain else "UTF-8", e.start)
    low = text.lower()
    need = CONFIG.get("report_needs") or ["## method", "robust z", "threshold", "## events", "## limitations"]
    absent = [n for n in need if n not in low]
    if absent:
        return False, "report lacks: %s" % ", ".join(absent)
    lost = [s for s in starts if s not in text]
    if lost:
        return False, "events not described: %s" % ", ".join(lost)
    return True, "%s: %d lines, %s, method and %d listed event(s) covered" % (
        path, text.count("\n"), "ASCII" if plain else "UTF-8", len(starts))


check("anomalies table (CSV)", check_csv)
check("chart (PNG)", check_png)
check("report (Markdown)", check_report)
for c in checks:
    print("%s  %-24s %s" % ("PASS" if c["ok"] else "FAIL", c["name"], c["detail"]))
ok = all(c["ok"] for c in checks)
print("All outputs valid." if ok else "Some outputs failed validation.")
print("SANDALYST_VALIDATION " + json.dumps({"ok": ok, "checks": checks}, separators=(",", ":")))
