# --- skill helpers (Sandalyst offline analyst): loading, words, columns, texts ---------
import unicodedata

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def load_table(path, kind, sheet=None):
    """The table as a DataFrame; kept in the kernel between asks (a copy is returned),
    read again when the file changed or the kernel is new."""
    cache = globals().setdefault("_sandalyst_tables", {})
    st = os.stat(path)
    key = (path, sheet, st.st_mtime_ns, st.st_size)
    if key in cache:
        return cache[key].copy(), True
    parts = read_tables(path, kind)
    df = dict(parts).get(sheet, parts[0][1]) if sheet else parts[0][1]
    df.columns = [str(c) for c in df.columns]
    if len(cache) > 8:
        cache.clear()
    cache[key] = df
    return df.copy(), False


def norm(s):
    """Lower case, accents dropped, anything but letters and digits as one space."""
    s = unicodedata.normalize("NFKD", str(s).lower())
    s = "".join(c for c in s if not unicodedata.combining(c))
    return re.sub(r"[^a-z0-9]+", " ", s).strip()


LEVEL_WORDS = tuple(LEXICON["level_words"])


def named_columns(reading, pool):
    """The columns of `pool` the request names (as the planner read it), in the order
    named."""
    return [n["column"] for n in reading["columns"] if n["column"] in pool]


def named_after(reading, col, word):
    """Whether the request names `col` right after a word of a kind (`by`, `asks`,
    `joins`, `counted`)."""
    return any(n["column"] == col and n[word] for n in reading["columns"])


def values_named(reading, series, free_only=True):
    """The values of `series` the request names (three letters or more, not a bare
    number; with `free_only`, not within a column's words), in the order named: the
    planner read where values may be, the data says which are."""
    at = {}
    for p in reading["phrases"]:
        if p["free"] or not free_only:
            at.setdefault(p["text"], p["at"])
    hits = []
    for v in series.dropna().astype(str).unique():
        vn = norm(v)
        if len(vn) < 3 or vn.isdigit():
            continue
        forms = [vn, vn + "s", vn + "es"] + ([vn[:-1] + "ies"] if vn.endswith("y") and len(vn) > 3 else [])
        found = [at[f] for f in forms if f in at]
        if found:
            hits.append((min(found), v))
    return [v for _, v in sorted(hits)]


def column_roles(df):
    """(time column, its unit, {numeric column: values}, categorical columns, id-like)."""
    best = None
    for c in df.columns:
        try:
            t = time_candidate(c, df[c])
        except Exception:
            t = None
        if t and (best is None or t["score"] > best["score"]):
            best = t
    time_col = best["name"] if best else None
    numeric, cats, ids = {}, [], []
    for c in df.columns:
        if c == time_col:
            continue
        v = numeric_view(df[c])
        if v is not None and v.notna().sum() >= 1:
            numeric[c] = v.astype(float)
            if is_id_like(c, df[c]):
                ids.append(c)
        else:
            cats.append(c)
    return time_col, (best or {}).get("unit"), numeric, cats, ids


CALENDAR = json.loads(__SANDALYST_TEXTS__("calendar"))
MONTH_NAMES = {lang: c["months"] for lang, c in CALENDAR.items()}
DAY_NAMES = {lang: c["days"] for lang, c in CALENDAR.items()}


def period_key(ts, period, lang):
    """(sort key Series, label Series) of each timestamp's period."""
    if period == "weekday":
        k = ts.dt.dayofweek
        return k, k.map(lambda d: DAY_NAMES[lang][int(d)] if d == d else "")
    if period == "hour":
        k = ts.dt.hour
        return k, k.map(lambda h: "%02d:00" % h if h == h else "")
    if period == "day":
        k = ts.dt.normalize()
        return k, k.dt.strftime("%Y-%m-%d")
    if period == "week":
        k = (ts - pd.to_timedelta(ts.dt.dayofweek, unit="D")).dt.normalize()
        return k, k.dt.strftime("%Y-%m-%d")
    if period == "quarter":
        k = ts.dt.year * 10 + ts.dt.quarter
        return k, ts.dt.year.astype("Int64").astype(str) + " Q" + ts.dt.quarter.astype("Int64").astype(str)
    if period == "year":
        k = ts.dt.year
        return k, k.astype("Int64").astype(str)
    k = ts.dt.year * 100 + ts.dt.month
    return k, ts.dt.strftime("%Y-%m")


def local_num(s):
    """A number written with a dot as the answer's language writes it: Spanish answers
    write a decimal comma and, from five digits on, groups of three separated by a
    non-breaking space ("12\u00a0345,5", as the RAE recommends). Tables (CSV) keep the dot."""
    s = str(s)
    if globals().get("CONFIG", {}).get("lang") != "es":
        return s
    m = re.match(r"^([-+]?)(\d+)(?:\.(\d+))?(.*)$", s)
    if not m:
        return s
    sign, ip, fp, rest = m.groups()
    if len(ip) >= 5:
        head = len(ip) % 3 or 3
        ip = "\u00a0".join([ip[:head]] + [ip[i:i + 3] for i in range(head, len(ip), 3)])
    return sign + ip + ("," + fp if fp else "") + rest


def fmt(x):
    """A number as a person writes it: up to 2 decimals (3 below 1), no trailing zeros."""
    try:
        x = float(x)
    except Exception:
        return str(x)
    if not np.isfinite(x):
        return "-"
    a = abs(x)
    d = 0 if a >= 1000 and float(x).is_integer() else (2 if a >= 1 else 3)
    s = "%.*f" % (d, x)
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return local_num("0" if s == "-0" else s)


def md_table(columns, rows):
    out = ["| " + " | ".join(str(c) for c in columns) + " |",
           "|" + "|".join("---" for _ in columns) + "|"]
    for r in rows:
        out.append("| " + " | ".join(fmt(v) if isinstance(v, (int, float, np.floating, np.integer))
                                     and not isinstance(v, bool) else str(v) for v in r) + " |")
    return "\n".join(out)


def finish_outputs(out, csv_df, fig, report_lines, ascii_only):
    """Write the table, the chart and the report, reopen them, return the files."""
    for p in out.values():
        os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
    files = []
    if csv_df is not None:
        if ascii_only:
            csv_df = csv_df.copy()
            csv_df.columns = [ascii_text(c) for c in csv_df.columns]
            for c in csv_df.columns:
                if csv_df[c].dtype == object:
                    csv_df[c] = csv_df[c].map(lambda x: ascii_text(x) if isinstance(x, str) else x)
        csv_df.to_csv(out["csv"], index=False)
        back = pd.read_csv(out["csv"])
        assert len(back) == len(csv_df), "the table did not reopen with the same rows"
        files.append(out["csv"])
    if fig is not None:
        fig.savefig(out["png"], dpi=100)
        plt.close(fig)
        assert os.path.getsize(out["png"]) > 1000, "the chart is empty"
        files.append(out["png"])
    text = "\n".join(report_lines) + "\n"
    if ascii_only:
        text = ascii_text(text)
    with open(out["md"], "w", encoding="utf-8") as f:
        f.write(text)
    files.append(out["md"])
    return files


def say(s, ascii_only):
    return ascii_text(s) if ascii_only else str(s)


def cap(s):
    """A title or label: first letter upper case."""
    s = str(s)
    return s[:1].upper() + s[1:]


def table_answer(table, files, texts, ascii_only):
    """The answer's table (its first rows, missing values as null) and what each written
    file is (`texts["what_csv"]`, ...)."""
    return {"columns": [say(c, ascii_only) for c in table.columns],
            "table": [[say(x, ascii_only) if isinstance(x, str) else (None if x != x else x) for x in r]
                      for r in table.head(12).values.tolist()],
            "table_rows": int(len(table)),
            "files": [{"path": p, "what": texts.get("what_" + p.rsplit(".", 1)[-1].lower(), "")} for p in files]}


def emit_answer(answer):
    print("SANDALYST_ANSWER " + json.dumps(answer, default=str, ensure_ascii=True))
# --- end of skill helpers ------------------------------------------------------------
