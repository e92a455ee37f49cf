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


def find_words(text_n, phrase_n):
    """Start of `phrase_n` in `text_n` as whole words (plural s/es allowed), or -1."""
    if not phrase_n:
        return -1
    m = re.search(r"(?<![a-z0-9])" + re.escape(phrase_n) + r"(?:s|es)?(?![a-z0-9])", text_n)
    if m is None and phrase_n.endswith("y") and len(phrase_n) > 3:
        # "countries" for `country`, "cities" for `city`
        m = re.search(r"(?<![a-z0-9])" + re.escape(phrase_n[:-1]) + r"ies(?![a-z0-9])", text_n)
    return m.start() if m else -1


SYNONYMS = LEXICON["column_synonyms"]
UNIT_TOKENS = set(LEXICON["unit_tokens"])
LEVEL_WORDS = tuple(LEXICON["level_words"])
BY_WORDS = tuple(LEXICON["by_words"])


def column_aliases(col):
    """[(alias, strength)]: the name itself (3), without unit tokens (3), synonyms (2),
    single meaningful words of a longer name (1)."""
    n = norm(col)
    toks = n.split()
    core = [t for t in toks if t not in UNIT_TOKENS] or toks
    out = {n: 3, " ".join(core): 3}
    for group in SYNONYMS:
        gn = [norm(g) for g in group]
        if " ".join(core) in gn or n in gn:
            for g in gn:
                out.setdefault(g, 2)
    if len(core) > 1:
        for t in core:
            if len(t) >= 4:
                out.setdefault(t, 1)
                for group in SYNONYMS:
                    gn = [norm(g) for g in group]
                    if t in gn:
                        for g in gn:
                            out.setdefault(g, 1)
    return list(out.items())


def match_columns(text_n, cols):
    """Columns named in the request (by name, words of the name, or synonym), in the
    order they are named; overlapping mentions go to the strongest match."""
    found = []
    for c in cols:
        for alias, strength in column_aliases(c):
            pos = find_words(text_n, alias)
            if pos >= 0:
                found.append((strength, len(alias), pos, c))
    found.sort(key=lambda f: (-f[0], -f[1], f[2]))
    taken, chosen, spans = set(), [], []
    for strength, length, pos, c in found:
        if c in taken:
            continue
        if any(pos < e and s < pos + length for s, e in spans):
            continue
        taken.add(c)
        spans.append((pos, pos + length))
        chosen.append((pos, c))
    chosen.sort()
    globals()["_sandalyst_mentions"] = dict((c, p) for p, c in chosen)
    return [c for _, c in chosen], spans


def values_named(text_n, series, spans=()):
    """The values of `series` the request names (three letters or more, not a bare
    number, outside the column mentions `spans`), in the order they are named."""
    hits = []
    for v in series.dropna().astype(str).unique():
        vn = norm(v)
        if len(vn) < 3 or vn.isdigit():
            continue
        pos = find_words(text_n, vn)
        if pos >= 0 and not any(s <= pos < e for s, e in spans):
            hits.append((pos, v))
    return [v for _, v in sorted(hits)]


def after_word(text_n, col, words):
    """Whether the request names `col` right after one of `words`."""
    pos = globals().get("_sandalyst_mentions", {}).get(col)
    if pos is None:
        return False
    before = text_n[:pos].split()
    return bool(before) and before[-1] in words


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


MONTHS = {int(k): v for k, v in sorted(LEXICON["months"].items(), key=lambda kv: int(kv[0]))}
CALENDAR = json.loads(__SANDALYST_TEXTS__("calendar"))
MONTH_NAMES = {lang: c["months"] for lang, c in CALENDAR.items()}
DAY_NAMES = {lang: c["days"] for lang, c in CALENDAR.items()}
PERIODS = [(p["period"], p["words"]) for p in LEXICON["periods"]]
MONTH_PREPOSITIONS = tuple(LEXICON["month_prepositions"])


def months_named(text_n):
    """Months named in the request, in the order named. "may" and "mar" are also
    ordinary words: they count after in/of/en/de/for or before a year."""
    found = []
    words = text_n.split()
    for m, names in MONTHS.items():
        for name in names:
            pos = find_words(text_n, name)
            if pos < 0:
                continue
            if name in ("may", "mar"):
                i = len(text_n[:pos].split())
                prev = words[i - 1] if i > 0 else ""
                nxt = words[i + 1] if i + 1 < len(words) else ""
                if prev not in MONTH_PREPOSITIONS and \
                        not re.fullmatch(r"(19|20)[0-9]{2}", nxt):
                    continue
            found.append((pos, m))
            break
    found.sort()
    return [m for _, m in found]


def years_named(text_n):
    return [int(y) for y in re.findall(r"(?<![0-9])((?:19|20)[0-9]{2})(?![0-9])", text_n)]


def period_named(text_n):
    for key, words in PERIODS:
        for w in words:
            if find_words(text_n, w) >= 0:
                return key
    return None


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
