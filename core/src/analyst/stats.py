# Sandalyst offline analyst (rule-based, not an LLM): carry out a statistics plan.
# The planner read the request into an explicit plan (CONFIG["plan"]: statistics,
# measures or a derived measure, grouping, conditions, answer shape, rounding); this
# script checks it against the data's real values and types, computes it, states the
# plan with the answer ("I computed: ..."), and writes a table (CSV), a chart when the
# answer has several values (PNG) and a report (Markdown). When the data do not fit the
# plan it declines (ok: false, declined: true) instead of answering something else.
CONFIG = json.loads(__SANDALYST_CONFIG__)

LANG = CONFIG.get("lang", "en")
ASCII = bool(CONFIG.get("ascii"))
OUT = CONFIG["outputs"]
PLAN = CONFIG["plan"]
T = json.loads(__SANDALYST_TEXTS__("stats"))[LANG]
# CSV column names stay English (as the other skills' tables).
CSV_NAME = {"mean": "mean", "median": "median", "mode": "mode", "std": "standard_deviation",
            "var": "variance", "min": "minimum", "max": "maximum", "range": "range", "iqr": "iqr",
            "count": "count", "distinct": "distinct_count", "sum": "sum", "skew": "skewness",
            "kurt": "kurtosis", "cv": "coefficient_of_variation", "sem": "standard_error_of_mean", "missing": "missing", "share": "percent"}
DECIMALS = PLAN.get("decimals")


def plural(n, en="s", es="es"):
    return ("" if n == 1 else en) if LANG == "en" else ("" if n == 1 else es)


def missing_note(miss, name, zero):
    key = "missing_zero" if zero else "missing_dropped"
    if LANG == "en":
        return T[key] % (miss, plural(miss), name)
    s = "" if miss == 1 else "s"
    return T[key] % (miss, plural(miss), s, name, s)


def num(x):
    # A number as the answer writes it: as many decimals as asked, else up to 4.
    x = float(x)
    if not np.isfinite(x):
        return "-"
    if DECIMALS is not None:
        return local_num("%.*f" % (int(DECIMALS), round(x, int(DECIMALS))))
    if x == int(x) and abs(x) < 1e15:
        return local_num("%d" % int(x))
    a = abs(x)
    s = ("%.4f" % x) if a >= 0.001 else ("%.4g" % x)
    if "e" not in s and "." in s:
        s = s.rstrip("0").rstrip(".")
    return local_num(s)


def inum(n):
    # A count of rows: an integer whatever rounding the question asked for.
    return local_num("%d" % int(n))


def pval(p):
    p = float(p)
    if DECIMALS is not None and p >= 10 ** -int(DECIMALS):
        return local_num("%.*f" % (int(DECIMALS), p))
    return local_num(("%.4g" % p) if p >= 1e-4 else ("%.3g" % p))


def listing(items):
    # a, b and c
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return "%s %s %s" % (", ".join(items[:-1]), T["and"], items[-1])


def ordinal(q):
    s = "%g" % round(q, 2)
    if LANG != "en" or "." in s:
        return s
    n = int(s)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return s + suffix


def stat_label(st):
    if st["name"] == "quantile":
        return T["quantile"] % ordinal(float(st["q"]) * 100)
    label = T[st["name"]]
    if st["name"] in ("std", "var"):
        kind = T["population"] if int(PLAN.get("ddof", 1)) == 0 else T["sample"]
        label = ("%s %s" % (kind, label)) if LANG == "en" else ("%s %s" % (label, kind))
    return label


def csv_label(st, measure):
    if st["name"] == "quantile":
        base = "p%g" % round(float(st["q"]) * 100, 2)
    else:
        base = CSV_NAME[st["name"]]
    return re.sub(r"\s+", "_", "%s_%s" % (base, measure))


def decline(reason):
    emit_answer({"ok": False, "declined": True, "reason": say(reason, ASCII), "input": CONFIG["input"]})


def numeric_of(col):
    v = numeric_view(df[col])
    if v is None:
        return None
    return v.astype(float)


def is_one_of(col, values):
    # Rows whose value is one of `values`: numerically for codes ("1" matches 1.0 in a
    # column with gaps), else as text.
    nums = [v for v in (num_or_none(x) for x in values) if v is not None]
    if values and len(nums) == len(values):
        v = numeric_of(col)
        if v is not None:
            return v.isin(nums)
    return df[col].astype(str).isin([str(v) for v in values])


def num_or_none(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def compute(st, s):
    # One statistic of a Series without missing values.
    name, ddof = st["name"], int(PLAN.get("ddof", 1))
    if name == "count":
        return float(s.notna().sum())
    if name == "distinct":
        return float(s.nunique(dropna=True))
    if name == "mode":
        m = s.mode(dropna=True)
        return [float(x) if not isinstance(x, str) else x for x in m.tolist()]
    s = s.astype(float)
    if len(s) == 0:
        return float("nan")
    if name == "mean":
        return float(s.mean())
    if name == "median":
        return float(s.median())
    if name == "std":
        return float(s.std(ddof=ddof))
    if name == "var":
        return float(s.var(ddof=ddof))
    if name == "min":
        return float(s.min())
    if name == "max":
        return float(s.max())
    if name == "range":
        return float(s.max() - s.min())
    if name == "iqr":
        return float(s.quantile(0.75) - s.quantile(0.25))
    if name == "quantile":
        return float(s.quantile(float(st["q"])))
    if name == "sum":
        return float(s.sum())
    if name == "sem":
        # The standard deviation (sample unless asked otherwise) over the root of n.
        return float(s.std(ddof=ddof) / len(s) ** 0.5)
    if name == "cv":
        # The standard deviation (sample unless asked otherwise) over the mean.
        cv = float(s.std(ddof=ddof) / s.mean())
        # As a percentage when the method multiplied it by 100.
        return cv * 100 if PLAN.get("percent") else cv
    if name in ("skew", "kurt") and PLAN.get("biased"):
        # As scipy computes them by default (the ticket named scipy): biased.
        import scipy.stats as sst
        f = sst.skew if name == "skew" else sst.kurtosis
        return float(f(s.values, bias=True))
    if name == "skew":
        return float(s.skew())
    if name == "kurt":
        return float(s.kurt())
    raise ValueError("unknown statistic %s" % name)


def show(v):
    if isinstance(v, list):
        return ", ".join(num(x) if not isinstance(x, str) else say(x, ASCII) for x in v)
    return num(v)


CHART = {}  # what the chart shows, in the answer: its title and where its y-axis starts


def bar_chart(labels, values, title, ylabel, highlight=()):
    fig, ax = plt.subplots(figsize=(9, 5))
    vals = [float(v) for v in values]
    ax.bar(range(len(vals)), vals, color=["#d1495b" if l in highlight else "#2a6f97" for l in labels])
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels([say(l, ASCII) for l in labels], rotation=30 if len(vals) > 6 else 0,
                       ha="right" if len(vals) > 6 else "center")
    if all(v >= 0 for v in vals if np.isfinite(v)):
        # Bars of a non-negative quantity start at zero, so their heights compare.
        ax.set_ylim(bottom=0)
    ax.set_ylabel(cap(say(ylabel, ASCII)))
    ax.set_title(cap(say(title, ASCII)))
    ax.grid(axis="y", alpha=0.3)
    CHART.update({"kind": "bar", "title": ax.get_title(), "y_from": float(ax.get_ylim()[0])})
    return fig


df, cached = load_table(CONFIG["input"], CONFIG.get("kind", "csv"), CONFIG.get("sheet"))
n_all = len(df)
req = norm(CONFIG["request"])

# ---- the measures: columns or a derived measure, checked against the data -----------
series = {}
for m in PLAN.get("measures", []):
    if m.get("column") is not None:
        col = m["column"]
        v = numeric_of(col)
        needs_number = PLAN["task"] != "describe" or any(
            s["name"] not in ("count", "distinct", "mode", "missing") for s in PLAN.get("stats", []))
        if v is None or (needs_number and v.notna().sum() < 0.9 * df[col].notna().sum()):
            if needs_number:
                got = 0 if v is None else int(v.notna().sum())
                return decline(T["not_numeric"] % (col, got, int(df[col].notna().sum())))
            v = df[col]
        series[m["name"]] = v
    else:
        d = m["derived"]
        if d["op"] in ("days", "hours"):
            ta, tb = parse_times(df[d["a"]]), parse_times(df[d["b"]])
            if ta.notna().sum() < 0.9 * df[d["a"]].notna().sum() or tb.notna().sum() < 0.9 * df[d["b"]].notna().sum():
                return decline(T["not_dates"] % (d["a"], d["b"]))
            secs = (ta - tb).dt.total_seconds()
            series[m["name"]] = secs / (86400.0 if d["op"] == "days" else 3600.0)
        else:
            # A side may be a number ("2024 - model_year").
            a = d["a_value"] if d.get("a_value") is not None else numeric_of(d["a"])
            b = d["b_value"] if d.get("b_value") is not None else numeric_of(d["b"])
            for c, v in ((d["a"], a), (d["b"], b)):
                if v is None:
                    return decline(T["not_numeric"] % (c, 0, int(df[c].notna().sum())))
            if d["op"] == "product":
                series[m["name"]] = a * b
            elif d["op"] == "sum":
                series[m["name"]] = a + b
            elif d["op"] == "difference":
                series[m["name"]] = a - b
            else:
                series[m["name"]] = (a / b).where(b != 0)
second = None
if PLAN.get("second"):
    second = numeric_of(PLAN["second"])
    if second is None:
        return decline(T["not_numeric"] % (PLAN["second"], 0, int(df[PLAN["second"]].notna().sum())))


def measure_text(m):
    d = m.get("derived")
    if not d:
        return "`%s`" % m["name"]
    sym = {"product": "x", "sum": "+", "difference": "-", "ratio": "/", "days": "-", "hours": "-"}[d["op"]]
    unit = (" (%s)" % T[d["op"]]) if d["op"] in ("days", "hours") else ""
    a = d["a"] if d.get("a_value") is not None else "`%s`" % d["a"]
    b = d["b"] if d.get("b_value") is not None else "`%s`" % d["b"]
    inner = "%s %s %s%s" % (a, sym, b, unit)
    return inner if m["name"] == "%s %s %s" % (d["a"], sym, d["b"]) else "`%s` = %s" % (m["name"], inner)


# ---- conditions: the plan's numeric ones, and values of text columns named ----------
mask = pd.Series(True, index=df.index)
said = []
missing_notes = []  # conditions and missing values, said after the plan
OPS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "="}
TRUE_WORDS = set(LEXICON["true_values"])
FALSE_WORDS = set(LEXICON["false_values"])


def dates_of(col):
    ts = parse_times(df[col])
    if ts.notna().sum() < 0.9 * df[col].notna().sum() or ts.notna().sum() == 0:
        return None
    if getattr(ts.dt, "tz", None) is not None:
        ts = ts.dt.tz_localize(None)
    return ts


# Plain conditions first; a comparison with a statistic ("above the median") is
# computed on the rows they keep.
filters = sorted(PLAN.get("filters", []), key=lambda f: f.get("stat") is not None)
months_from = {}
for f in filters:
    col, op = f["column"], f["op"]
    if op == "year":
        ts = parse_times(df[col])
        mask &= ts.dt.year == int(f["value"])
        said.append(T["year"] % ("`%s`" % col, int(f["value"])))
        continue
    if op in ("date_from", "date_before", "month_from", "month_to", "month_before", "month_since"):
        ts = dates_of(col)
        if ts is None:
            return decline(T["not_dates"] % (col, col))
        if op in ("month_before", "month_since"):
            # A month named without its year: only when every date is of one year.
            years = sorted(int(y) for y in ts.dropna().dt.year.unique())
            m = int(f["value"])
            if len(years) != 1:
                word = T["month_before_word"] if op == "month_before" else T["month_since_word"]
                named = MONTH_NAMES[LANG][min(m, 12) - 1] if op == "month_before" or m <= 12 else MONTH_NAMES[LANG][11]
                return decline(T["which_year"] % (col, years[0], years[-1], word, named, years[-1]))
            y = years[0] + (m - 1) // 12
            day = "%04d-%02d-01" % (y, (m - 1) % 12 + 1)
            op = "date_before" if op == "month_before" else "date_from"
        else:
            day = f.get("date")
        if op == "date_from":
            mask &= ts >= pd.Timestamp(day)
            said.append(T["date_from"] % (col, day))
        elif op == "date_before":
            mask &= ts < pd.Timestamp(day)
            said.append(T["date_before"] % (col, day))
        elif op == "month_from":
            mask &= ts.dt.month >= int(f["value"])
            months_from[col] = int(f["value"])
        else:
            lo = months_from.pop(col, 1)
            mask &= ts.dt.month <= int(f["value"])
            hi = int(f["value"])
            span = MONTH_NAMES[LANG][lo - 1] if lo == hi else T["month_to"] % (MONTH_NAMES[LANG][lo - 1], MONTH_NAMES[LANG][hi - 1])
            said.append(T["month_range"] % (col, span))
        continue
    if op == "in":
        keep = is_one_of(col, f.get("values", []))
        mask &= keep
        said.append("`%s` = %s" % (col, " / ".join(say(str(v), ASCII) for v in f.get("values", []))))
        continue
    if op == "not_in":
        # A row whose value is missing is not known to be "other than" the value.
        known = df[col].notna()
        gone = int((mask & ~known).sum())
        if gone:
            missing_notes.append(missing_note(gone, "`%s`" % col, False))
        mask &= known & ~is_one_of(col, f.get("values", []))
        said.append(T["not_value"] % (col, " / ".join(say(str(v), ASCII) for v in f.get("values", []))))
        continue
    if op in ("is_true", "is_false"):
        raw = df[col]
        words = raw.map(lambda x: norm(str(x)) if pd.notna(x) else "")
        truth = words.isin([norm(w) for w in TRUE_WORDS]) if op == "is_true" else words.isin([norm(w) for w in FALSE_WORDS])
        shown = sorted(set(raw[truth].astype(str)))
        if not shown:
            return decline(T["no_value"])
        mask &= truth
        said.append(T["truth"] % (col, " / ".join(shown)))
        continue
    v = numeric_of(col)
    if v is None:
        return decline(T["not_numeric"] % (col, 0, int(df[col].notna().sum())))
    if f.get("stat"):
        of = numeric_of(f["of"])
        if of is None:
            return decline(T["not_numeric"] % (f["of"], 0, int(df[f["of"]].notna().sum())))
        ref_s = of[mask].dropna()
        if len(ref_s) == 0:
            return decline(T["no_rows"] % ", ".join(said))
        x = float(ref_s.mean() if f["stat"] == "mean" else ref_s.median())
        rhs = T["stat_ref"] % (T[f["stat"]], f["of"], num(x), inum(len(ref_s)))
    else:
        x = float(f["value"])
        rhs = num(x) if DECIMALS is None else local_num("%g" % x)
    mask &= {"gt": v > x, "ge": v >= x, "lt": v < x, "le": v <= x, "eq": v == x}[op]
    said.append("`%s` %s %s" % (col, OPS[op], rhs))
# Values named in the request ("female", "en Bilbao") are conditions the planner read
# (op "in") against the values the inspection listed.
if PLAN.get("needs_value_filter") and not said:
    return decline(T["no_value"])
d = df[mask]
if len(d) == 0:
    return decline(T["no_rows"] % ", ".join(said))
cond_text = ""
if said:
    missing_notes.append(T["filters"] % (" %s " % T["and"]).join(said))

lines = []          # the answer's result lines
VALUES = {}         # the answer's values by name, unrounded (a ticket's answer format)
notes = []
table = None        # the result table (DataFrame)
fig = None
task = PLAN["task"]


def clean(name, s):
    # The values of a measure on the rows used, missing ones handled as the plan says.
    s = s.loc[d.index]
    miss = int(s.isna().sum())
    how = PLAN.get("missing")
    if miss and how in ("mean", "median"):
        # Filled with the statistic of the values present, as pandas' fillna(s.mean()).
        fill = float(s.mean() if how == "mean" else s.median())
        word = T[how]
        if LANG == "en":
            missing_notes.append(T["missing_filled"] % (miss, plural(miss), "`%s`" % name, word, num(fill)))
        else:
            e = "" if miss == 1 else "s"
            missing_notes.append(T["missing_filled"] % (miss, plural(miss), e, "`%s`" % name, e, word, num(fill)))
        return s.fillna(fill)
    if miss:
        zero = how == "zero"
        missing_notes.append(missing_note(miss, "`%s`" % name, zero))
        if zero:
            return s.fillna(0)
    return s.dropna()


def share_rows(d, target):
    # Which of the rows `d` meet a share's condition (a yes/no column's true or false
    # values, or the values named), which are known, and the condition in words.
    col, op = target["column"], target["op"]
    if op == "is_missing":
        return d[col].isna(), pd.Series(True, index=d.index), T["missing_of"] % col
    if op in ("is_true", "is_false"):
        def words(c):
            return c.map(lambda x: norm(str(x)) if pd.notna(x) else "")
        pick = [norm(w) for w in (TRUE_WORDS if op == "is_true" else FALSE_WORDS)]
        hit = words(d[col]).isin(pick)
        shown = sorted(set(d[col][hit].astype(str))) or sorted(set(df[col][words(df[col]).isin(pick)].astype(str)))
        if not shown:
            return None, None, None
        what = T["truth"] % (col, " / ".join(shown))
    elif op in OPS:
        # A numeric condition ("in condition 5", "a delay above 30").
        v = numeric_of(col)
        if v is None:
            return None, None, None
        v, x = v[d.index], float(target["value"])
        hit = {"gt": v > x, "ge": v >= x, "lt": v < x, "le": v <= x, "eq": v == x}[op]
        return hit, v.notna(), "`%s` %s %s" % (col, OPS[op], local_num("%g" % x))
    else:
        hit = d[col].astype(str).isin([str(v) for v in target.get("values", [])])
        what = "`%s` = %s" % (col, " / ".join(say(str(v), ASCII) for v in target.get("values", [])))
    return hit, d[col].notna(), what


if task == "describe":
    stats = PLAN.get("stats", [])
    measures = PLAN.get("measures", [])
    group = PLAN.get("group")
    target = PLAN.get("share_of")
    if target and [st["name"] for st in stats] == ["share"]:
        # The share of the kept rows where the asked condition holds.
        hit, known, what = share_rows(d, target)
        if hit is None:
            return decline(T["no_value"])
        if int(known.sum()) == 0:
            return decline(T["no_rows"] % ", ".join(said))
        k, n = int((hit & known).sum()), int(known.sum())
        gone = int((~known).sum())
        if gone:
            missing_notes.append(missing_note(gone, "`%s`" % target["column"], False))
        value = 100.0 * k / n
        VALUES.update(share=value, count=k, value=value)
        plan_text = T["share_of_rows"] % (what, inum(n), T["rows"], cond_text)
        lines.append(T["share_line"] % (what, num(value), inum(k), inum(n)))
        table = pd.DataFrame({"condition": [what.replace("`", "")], "rows": [k], "of_rows": [n], "percent": [value]})
    elif not measures:
        # Counting rows.
        value = float(len(d))
        VALUES.update(count=int(value), value=int(value))
        plan_text = "%s, %s %s %s" % (T["count_of"], T["out_of"], inum(n_all), T["rows"])
        lines.append("%s: %s" % (cap(T["count_of"]), num(value)))
        table = pd.DataFrame({"count": [int(value)]})
    else:
        cols = {}
        only_missing = all(st["name"] == "missing" for st in stats)
        for m in measures:
            raw = series[m["name"]].loc[d.index]
            # Missing values are counted on every row the conditions keep.
            s = raw if only_missing else clean(m["name"], series[m["name"]])
            if group:
                gone = raw.isna().groupby(d[group].astype(str), sort=True).sum().astype(float)
            else:
                gone = float(raw.isna().sum())
            if group:
                keys = d.loc[s.index, group].astype(str)
                for st in stats:
                    if st["name"] == "missing":
                        cols[csv_label(st, m["name"])] = gone
                        continue
                    res = s.groupby(keys, sort=True).apply(lambda g: compute(st, g))
                    cols[csv_label(st, m["name"])] = res
            else:
                for st in stats:
                    v = gone if st["name"] == "missing" else compute(st, s)
                    if m is measures[0]:
                        VALUES.setdefault(st["name"], v)
                        if len(stats) == 1:
                            VALUES["value"] = v
                    lines.append("%s %s %s: %s" % (cap(stat_label(st)), T["of"], measure_text(m), show(v)))
                    cols[csv_label(st, m["name"])] = [show(v) if isinstance(v, list) else v]
        what = listing(stat_label(st) for st in stats)
        of = listing(measure_text(m) for m in measures)
        used = len(s)
        plan_text = "%s %s %s%s %s %s %s%s" % (what, T["of"], of,
                                               (" %s `%s`" % (T["by"], group)) if group else "",
                                               T["over"], inum(used), T["rows"], cond_text)
        if group:
            table = pd.DataFrame(cols)
            table.index.name = group
            table = table.reset_index()
            for _, r in table.iterrows():
                vals = ["%s %s" % (stat_label(st), show(r[csv_label(st, m["name"])]))
                        for m in measures for st in stats]
                lines.append("%s: %s" % (say(r[group], ASCII), ", ".join(vals)))
            first = csv_label(stats[0], measures[0]["name"])
            if stats[0]["name"] != "mode":
                fig = bar_chart(list(table[group].astype(str)), list(table[first]),
                                T["title_by"] % (cap(stat_label(stats[0])), measures[0]["name"], group),
                                "%s %s %s" % (stat_label(stats[0]), T["of"], measures[0]["name"]))
        else:
            table = pd.DataFrame(cols)
            table["rows"] = used
    if any(st["name"] == "quantile" or st["name"] == "iqr" for st in PLAN.get("stats", [])):
        notes.append(T["qmethod"])
    if any(st["name"] in ("skew", "kurt") for st in PLAN.get("stats", [])):
        notes.append(T["skewnote"])
elif task in ("argmax", "argmin"):
    label = PLAN["group"]
    op = PLAN.get("label_op")
    if op == "sum_if_repeated":
        op = "sum"
    if op in ("rows", "share"):
        # Labels ranked by their number of rows ("the most passengers") or by the
        # share of their rows where a condition holds ("the highest survival rate").
        kept = d[d[label].notna()]
        gone = len(d) - len(kept)
        if gone:
            missing_notes.append(missing_note(gone, "`%s`" % label, False))
        keys = kept[label].astype(str)
        s = kept[label]
        if op == "rows":
            per = keys.value_counts()
            what = T["count_of"]
        else:
            hit, known, cond = share_rows(kept, PLAN["share_of"])
            if hit is None:
                return decline(T["no_value"])
            s = kept[known]
            per = (100.0 * hit[known].groupby(keys[known]).mean()).dropna()
            what = T["share_where"] % cond
        if len(per) == 0:
            return decline(T["no_rows"] % ", ".join(said))
        how = "%s `%s`" % (T["by"], label)
    elif op is None:
        m = PLAN["measures"][0]
        s = clean(m["name"], series[m["name"]])
        keys = d.loc[s.index, label].astype(str)
        if keys.duplicated().any():
            return decline(T["repeated"] % label)
        per = pd.Series(s.values, index=keys.values)
        what = "`%s`" % m["name"] if not m.get("derived") else measure_text(m)
        how = T["one_row"] % ("`%s`" % label)
    else:
        m = PLAN["measures"][0]
        s = clean(m["name"], series[m["name"]])
        keys = d.loc[s.index, label].astype(str)
        per = s.groupby(keys).agg({"sum": "sum", "mean": "mean", "median": "median", "count": "count"}[op])
        what = T[{"sum": "total_of", "mean": "mean_of", "median": "median_of", "count": "count_of"}[op]] % measure_text(m) \
            if op != "count" else T["count_of"]
        how = "%s `%s`" % (T["by"], label)
    best = float(per.max() if task == "argmax" else per.min())
    winners = [str(k) for k, v in per.items() if np.isclose(float(v), best, rtol=1e-12, atol=1e-12)]
    VALUES.update(label=winners, value=best)
    extreme = T["highest"] if task == "argmax" else T["lowest"]
    plan_text = "%s %s, %s, %s %s %s%s" % (extreme, what, how, T["over"], inum(len(s)), T["rows"], cond_text)
    verb = T["had"] if len(winners) == 1 else T["have"]
    names = (" %s " % T["and"]).join(say(w, ASCII) for w in winners)
    tie = (" (%s)" % T["tied"]) if len(winners) > 1 else ""
    if LANG == "en":
        lines.append("%s %s %s %s: %s%s." % (names, verb, extreme, what, num(best), tie))
    else:
        lines.append("%s %s %s %s: %s%s." % (names, verb, extreme, what, num(best), tie))
    ordered = per.sort_values(ascending=(task == "argmin"), kind="mergesort")
    table = pd.DataFrame({label: [str(k) for k in ordered.index], "value": ordered.values.astype(float)})
    shown = ordered.iloc[:20]
    fig = bar_chart([str(k) for k in shown.index], list(shown.values),
                    "%s %s %s (%s: %s)" % (cap(what.replace("`", "")), T["by"], label,
                                           T["mark_high" if task == "argmax" else "mark_low"], ", ".join(winners)),
                    what.replace("`", ""), highlight=set(winners))
elif task == "correlation":
    import scipy.stats as sst

    m = PLAN["measures"][0]
    a = series[m["name"]].loc[d.index]
    b = second.loc[d.index]
    both = a.notna() & b.notna()
    dropped = int((~both).sum())
    a, b = a[both].astype(float), b[both].astype(float)
    if len(a) < 3:
        return decline(T["too_few"] % len(a))
    method = PLAN.get("method") or "pearson"
    if method == "spearman":
        res = sst.spearmanr(a, b)
    elif method == "kendall":
        res = sst.kendalltau(a, b)
    else:
        res = sst.pearsonr(a, b)
    r, p = float(res[0]), float(res[1])
    VALUES.update(r=r, p_value=p, n=int(len(a)), value=r)
    if dropped:
        missing_notes.append(missing_note(dropped, "`%s`/`%s`" % (m["name"], PLAN["second"]), False))
    plan_text = "%s %s %s %s `%s` %s %s %s%s" % (T[method], T["between"], measure_text(m), T["and"], PLAN["second"],
                                                T["over"], inum(len(a)), T["pairs"], cond_text)
    lines.append("%s: r = %s, %s = %s (n = %d)" % (cap(T[method]), num(r), T["p"], pval(p), len(a)))
    table = pd.DataFrame({"method": [method], "r": [r], "p_value": [p], "n": [len(a)]})
    fig, ax = plt.subplots(figsize=(7, 5))
    ax.scatter(a, b, s=12, color="#2a6f97")
    ax.set_xlabel(say(m["name"], ASCII))
    ax.set_ylabel(say(PLAN["second"], ASCII))
    ax.set_title(cap(say("%s: %s / %s (r = %s)" % (T[method], m["name"], PLAN["second"], num(r)), ASCII)))
elif task == "outliers":
    m = PLAN["measures"][0]
    s = clean(m["name"], series[m["name"]])
    if len(s) < 4:
        return decline(T["too_few"] % len(s))
    if PLAN.get("method") == "z":
        z = (s - s.mean()) / s.std(ddof=1)
        out = s[z.abs() > float(PLAN.get("z", 3.0))]
        plan_text = T["outliers_z"] % (measure_text(m), num(float(PLAN.get("z", 3.0)))) + " %s %s %s%s" % (T["over"], inum(len(s)), T["rows"], cond_text)
    else:
        q1, q3 = float(s.quantile(0.25)), float(s.quantile(0.75))
        lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
        out = s[(s < lo) | (s > hi)]
        plan_text = T["outliers_iqr"] % (measure_text(m), num(lo), num(hi)) + " %s %s %s%s" % (T["over"], inum(len(s)), T["rows"], cond_text)
    n_out = len(out)
    VALUES.update(count=n_out, value=n_out)
    nt = (T["n_outliers"] % (n_out, plural(n_out))) if LANG == "en" else (T["n_outliers"] % (n_out, plural(n_out), plural(n_out, "s", "s")))
    vals = sorted(float(x) for x in out.values)
    lines.append("%s%s" % (cap(nt), (": " + ", ".join(num(v) for v in vals[:20]) + (" ..." if n_out > 20 else "")) if n_out else "."))
    table = pd.DataFrame({"row": [int(i) + 1 for i in out.index], m["name"]: out.values.astype(float)})
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.boxplot(s.values, vert=False, whis=1.5)
    ax.set_title(cap(say("%s: %s" % (nt, m["name"]), ASCII)))
elif task == "normality":
    import scipy.stats as sst

    m = PLAN["measures"][0]
    s = clean(m["name"], series[m["name"]]).astype(float)
    if len(s) < 8:
        return decline(T["too_few"] % len(s))
    method = PLAN.get("method") or "skew"
    sk, ku = float(s.skew()), float(s.kurt())
    alpha = float(PLAN.get("alpha") or 0.05)
    alpha_text = T["alpha"] % (local_num("%g" % alpha), "" if PLAN.get("alpha_said") else T["alpha_default"])
    if method in ("shapiro", "ks"):
        if method == "shapiro":
            res = sst.shapiro(s.values)
            sym, name, key = "W", "shapiro-wilk", "shapiro"
        else:
            res = sst.kstest(s.values, "norm", args=(float(s.mean()), float(s.std(ddof=1))))
            sym, name, key = "D", "kolmogorov-smirnov", "ks"
        stat, p = float(res[0]), float(res[1])
        VALUES.update(statistic=stat, p_value=p, value=stat)
        plan_text = T[key] % measure_text(m) + " %s %s %s%s, %s" % (T["over"], inum(len(s)), T["rows"], cond_text, alpha_text)
        verdict = (T["consistent"] if p >= alpha else T["not_normal"]) % local_num("%g" % alpha)
        lines.append("%s = %s, %s = %s, %s: %s." % (sym, num(stat), T["p"], pval(p), T["n_used"] % inum(len(s)), verdict))
        table = pd.DataFrame({"test": [name], "statistic": [stat], "p_value": [p], "n": [len(s)], "alpha": [alpha],
                              "normal": [bool(p >= alpha)]})
    else:
        VALUES.update(skew=sk, kurt=ku, value=sk)
        plan_text = T["skewtest"] % measure_text(m) + " %s %s %s%s" % (T["over"], inum(len(s)), T["rows"], cond_text)
        verdict = T["sym"] if abs(sk) < 0.5 else (T["moderate"] if abs(sk) < 1 else T["strong"])
        lines.append("%s = %s, %s: %s." % (cap(T["skew"]), num(sk), T["kurt_note"] % num(ku), verdict))
        table = pd.DataFrame({"skewness": [sk], "kurtosis": [ku], "n": [len(s)]})
        notes.append(T["skewnote"])
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.hist(s.values, bins=min(30, max(5, len(s) // 5)), color="#2a6f97")
    ax.set_title(cap(say("%s: %s" % (T["skew"] if method == "skew" else method, m["name"]), ASCII)))
else:
    return decline("unknown task %s" % task)

if missing_notes:
    plan_text += " (%s)" % "; ".join(missing_notes)
if DECIMALS is not None:
    notes.append(T["rounded"] % (int(DECIMALS), plural(int(DECIMALS), "s", "es")))
headline = "%s: %s." % (T["computed"], plan_text)
headline = say(headline + "\n\n" + "\n".join("- " + l for l in lines), ASCII)
report = ["# %s" % T["answer"], "", "%s: %s" % (T["question"], CONFIG["request"]), "",
          "%s: %s." % (T["plan"], plan_text), ""] + ["- " + l for l in lines] + [""] + notes
if fig is not None and not CHART:
    CHART.update({"kind": "other", "title": fig.axes[0].get_title()})
files = finish_outputs(OUT, table, fig, report, ASCII)
what = {OUT["csv"]: T["what_csv"], OUT["png"]: T["what_png"], OUT["md"]: T["what_md"]}
emit_answer({
    "ok": True, "skill": "stats", "input": CONFIG["input"], "cached": cached,
    "headline": headline, "columns": [], "table": [], "table_rows": 0,
    "notes": [say(n, ASCII) for n in notes],
    "files": [{"path": f, "what": what[f]} for f in files],
    "plan": PLAN, "chart": CHART or None, "values": VALUES,
})
