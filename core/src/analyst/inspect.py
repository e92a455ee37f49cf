# Sandalyst offline analyst (rule-based, not an LLM), step 1 of 4: inspect the inputs.
# Lists every file under input/, reads each tabular one and prints a profile: rows,
# columns, dtypes, missing values, time range. The last line (SANDALYST_PROFILE) is
# the same profile as JSON, read by the planner to write the analysis step.
CONFIG = json.loads(__SANDALYST_CONFIG__)

MAX_TABLES = 25
MAX_BYTES = 500 * 1024 * 1024


def profile_table(path, kind, sheet, df):
    read = df.attrs.get("read")
    df = df.copy()
    df.columns = [str(c) for c in df.columns]
    info = {"path": path, "sheet": sheet, "kind": kind, "rows": int(len(df)),
            "columns": int(df.shape[1]), "column_names": list(df.columns)[:60],
            "missing_total": int(df.isna().sum().sum()), "time": [], "measures": [],
            "temperature": None, "categories": [], "time_span": None,
            "column_kinds": [], "read": read}
    lines = []
    times = []
    for c in df.columns:
        try:
            t = time_candidate(c, df[c])
        except Exception:
            t = None
        if t:
            times.append(t)
    times.sort(key=lambda t: -t["score"])
    info["time"] = times[:3]
    time_col = times[0]["name"] if times else None

    temps, measures, numeric = [], [], {}
    for c in df.columns:
        if c == time_col:
            continue
        v = numeric_view(df[c])
        if v is None or v.notna().sum() < 3:
            if not pd.api.types.is_numeric_dtype(df[c]):
                nun = int(df[c].nunique(dropna=True))
                if 1 <= nun <= 50 and len(df):
                    vc = df[c].astype(str).value_counts()
                    info["categories"].append({"name": c, "distinct": nun,
                                               "top": ascii_text(vc.index[0]), "top_count": int(vc.iloc[0])})
            continue
        numeric[c] = v
        if is_temperature(c):
            toks = tokens(c)
            score = 1.0 + (2.0 if any(h in toks or h in c.lower() for h in LEXICON["outdoor_words"]) else 0.0)
            score -= 1.5 if any(h in toks for h in LEXICON["indoor_words"]) else 0.0
            unit, src = temperature_unit(c, v)
            temps.append({"name": c, "unit": unit, "unit_source": src, "score": score})
            continue
        if is_id_like(c, df[c]):
            nun = int(df[c].nunique(dropna=True))
            if nun <= 50:
                vc = df[c].astype(str).value_counts()
                info["categories"].append({"name": c, "distinct": nun,
                                           "top": ascii_text(vc.index[0]), "top_count": int(vc.iloc[0])})
            continue
        if v.nunique() <= 2:
            continue
        toks = tokens(c)
        unit, mkind = measure_unit(c)
        if any(t in MEASURE_STRONG for t in toks) or "kwh" in c.lower():
            hint, reason = 3.0, "name suggests energy/power"
        elif any(t in MEASURE_WEAK for t in toks):
            hint, reason = 1.0, "name suggests a metered value"
        else:
            hint, reason = 0.0, "numeric column with large variance"
        measures.append({"name": c, "unit": unit, "kind": mkind, "hint": hint, "reason": reason,
                         "variance": float(np.nanvar(v.astype(float))),
                         "median": float(v.median()), "missing": int(v.isna().sum())})
    order = sorted(range(len(measures)), key=lambda i: measures[i]["variance"])
    for rank, i in enumerate(order):
        measures[i]["score"] = round(measures[i]["hint"] + (rank + 1) / max(1, len(measures)), 3)
    measures.sort(key=lambda m: -m["score"])
    for m in measures:
        m.pop("hint", None)
        m["variance"] = round(m["variance"], 6)
    info["measures"] = measures[:6]
    # Every column's kind, for the statistics planner to match a request against.
    time_names = set(t["name"] for t in times)
    for c in list(df.columns)[:60]:
        s = df[c]
        if c in time_names:
            kind = "datetime"
        elif pd.api.types.is_bool_dtype(s):
            kind = "bool"
        elif numeric_view(s) is not None:
            kind = "numeric"
        elif text_dates(s):
            # Dates that are not a time axis (a contract's start and end): still dates.
            kind = "datetime"
        else:
            kind = "text"
        nun = int(s.nunique(dropna=True))
        entry = {"name": c, "kind": kind, "distinct": nun, "missing": int(s.isna().sum()),
                 "id": bool(is_identifier(c, s))}
        # The values of a column with few of them (<= 50), so the planner can read "female",
        # "first class" or "en Bilbao" as conditions on it (and refuse words it cannot place).
        if 1 <= nun <= 50:
            entry["values"] = [str(v) for v in s.dropna().unique()[:40]]
        info["column_kinds"].append(entry)
    temps.sort(key=lambda t: -t["score"])
    if temps:
        info["temperature"] = {k: temps[0][k] for k in ("name", "unit", "unit_source")}

    # Human-readable profile.
    lines.append("rows: %d, columns: %d, missing cells: %d" % (len(df), df.shape[1], info["missing_total"]))
    lines.append("  %-28s %-14s %8s %8s  %s" % ("column", "dtype", "missing", "unique", "range / example"))
    for c in list(df.columns)[:40]:
        s = df[c]
        role = ""
        if c == time_col:
            role = "  [time]"
        elif measures and c == measures[0]["name"]:
            role = "  [main measure%s]" % (", " + measures[0]["unit"] if measures[0]["unit"] else "")
        elif info["temperature"] and c == info["temperature"]["name"]:
            role = "  [temperature, deg %s]" % info["temperature"]["unit"]
        if c in numeric:
            v = numeric[c]
            rng = "%.4g .. %.4g (median %.4g)" % (v.min(), v.max(), v.median()) if v.notna().any() else "-"
        else:
            nn = s.dropna()
            rng = ("%s .. %s" % (str(nn.iloc[0])[:24], str(nn.iloc[-1])[:24])) if len(nn) else "-"
        lines.append("  %-28s %-14s %8d %8d  %s%s" % (ascii_text(c)[:28], str(s.dtype)[:14],
                                                     int(s.isna().sum()), int(s.nunique(dropna=True)),
                                                     ascii_text(rng), role))
    if df.shape[1] > 40:
        lines.append("  ... %d more columns" % (df.shape[1] - 40))
    if CONFIG.get("sample_rows"):
        head = df.head(int(CONFIG["sample_rows"])).iloc[:, :12].to_csv(index=False).strip()
        lines.append("first rows (CSV):\n" + "\n".join(ascii_text(l)[:300] for l in head.splitlines()))
    if time_col:
        ts = parse_times(df[time_col], times[0]["unit"]).dropna().sort_values()
        if len(ts) > 1:
            diffs = ts.diff().dropna()
            diffs = diffs[diffs > pd.Timedelta(0)]
            interval = diffs.median() if len(diffs) else pd.Timedelta(0)
            dup = int(ts.duplicated().sum())
            expected = int((ts.iloc[-1] - ts.iloc[0]) / interval) + 1 if interval > pd.Timedelta(0) else len(ts)
            info["time_span"] = {"start": str(ts.iloc[0]), "end": str(ts.iloc[-1]),
                                 "interval_seconds": float(interval.total_seconds()),
                                 "duplicates": dup, "missing_intervals": max(0, expected - (len(ts) - dup))}
            lines.append("time column: %s, %s .. %s, median interval %s, %d duplicate timestamps, "
                         "about %d missing intervals" % (ascii_text(time_col), ts.iloc[0], ts.iloc[-1],
                                                         fmt_td(interval) if interval > pd.Timedelta(0) else "-",
                                                         dup, info["time_span"]["missing_intervals"]))
    else:
        lines.append("time column: none found (no column parses as dates/times)")
    if measures:
        lines.append("main measure: %s (%s)%s" % (ascii_text(measures[0]["name"]), measures[0]["reason"],
                                                 ", other numeric: " + ", ".join(ascii_text(m["name"]) for m in measures[1:])
                                                 if len(measures) > 1 else ""))
    else:
        lines.append("main measure: none (no usable numeric column)")
    if info["temperature"]:
        t = info["temperature"]
        lines.append("temperature: %s, deg %s (unit from %s)" % (ascii_text(t["name"]), t["unit"], t["unit_source"]))
    for cat in info["categories"][:5]:
        lines.append("category column %s: %d distinct values (most frequent %s, %d rows)" % (
            ascii_text(cat["name"]), cat["distinct"], cat["top"], cat["top_count"]))
    return info, lines


root = CONFIG.get("input_dir", "input")
files, tables = [], []
if not os.path.isdir(root):
    print("No input folder (%s/) in the workspace." % root)
else:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            files.append(os.path.join(dirpath, fn))
print("Input files (%d):" % len(files))
for p in files[:60]:
    try:
        size = os.path.getsize(p)
    except OSError:
        size = -1
    print("  %s  (%s bytes)" % (ascii_text(p), format(size, ",")))
if len(files) > 60:
    print("  ... and %d more files" % (len(files) - 60))

profile = {"version": 1, "files": [], "tables": []}
TEXT_BUDGET, JSON_BUDGET = int(CONFIG.get("text_budget", 12000)), 18000  # the tool output is capped (~32 KB): stay well below
printed, budget_hit = 0, False
have_openpyxl = optional_module("openpyxl")
have_parquet = optional_module("pyarrow") or optional_module("fastparquet")
for p in files:
    ext = os.path.splitext(p)[1].lower()
    kind = TABULAR_EXT.get(ext)
    entry = {"path": p, "size": os.path.getsize(p), "kind": kind, "status": "ok", "reason": None}
    profile["files"].append(entry)
    if kind is None:
        entry["status"], entry["reason"] = "not_tabular", "not a tabular file type"
        continue
    if kind == "excel" and not have_openpyxl:
        entry["status"], entry["reason"] = "skipped", "Excel file skipped: openpyxl is not installed"
        print("\n== %s ==\nskipped: openpyxl is not installed in the sandbox image" % ascii_text(p))
        continue
    if kind == "parquet" and not have_parquet:
        entry["status"], entry["reason"] = "skipped", "Parquet file skipped: pyarrow is not installed"
        print("\n== %s ==\nskipped: pyarrow is not installed in the sandbox image" % ascii_text(p))
        continue
    if entry["size"] > MAX_BYTES:
        entry["status"], entry["reason"] = "skipped", "file larger than 500 MB"
        continue
    if len(profile["tables"]) >= MAX_TABLES:
        entry["status"], entry["reason"] = "skipped", "too many tables; only the first %d profiled" % MAX_TABLES
        continue
    try:
        parts = read_tables(p, kind)
    except Exception as e:
        entry["status"], entry["reason"] = "error", ascii_text("%s: %s" % (type(e).__name__, e))[:300]
        print("\n== %s ==\ncould not read: %s" % (ascii_text(p), entry["reason"]))
        continue
    if kind == "text" and all(df.shape[1] < 2 for _, df in parts):
        entry["status"], entry["reason"] = "not_tabular", "text file without delimited columns"
        continue
    for sheet, df in parts:
        if df is None or df.shape[1] == 0:
            continue
        if len(df) == 0:
            print("\n== %s ==\nempty table (header only)" % ascii_text(p))
            continue
        info, lines = profile_table(p, kind, sheet, df)
        profile["tables"].append(info)
        block = "\n== %s%s (%s) ==\n%s" % (ascii_text(p), (" [sheet %s]" % ascii_text(sheet)) if sheet else "",
                                          kind, "\n".join(lines))
        if printed + len(block) < TEXT_BUDGET:
            print(block)
            printed += len(block)
        elif not budget_hit:
            print("\n... profiles of further tables omitted to keep the output short")
            budget_hit = True

if not profile["tables"]:
    print("\nNo readable tabular data found.")
line = json.dumps(profile, separators=(",", ":"), default=str)
if len(line) > JSON_BUDGET:
    for t in profile["tables"]:
        t["column_names"] = t["column_names"][:10]
    profile["files"] = profile["files"][:50]
    line = json.dumps(profile, separators=(",", ":"), default=str)
while len(line) > JSON_BUDGET and len(profile["tables"]) > 1:
    profile["tables"].pop()
    line = json.dumps(profile, separators=(",", ":"), default=str)
print("\nSANDALYST_PROFILE " + line)
