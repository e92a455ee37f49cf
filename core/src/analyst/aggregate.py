# Sandalyst offline analyst (rule-based, not an LLM): answer an aggregate question.
# Totals, means, counts, medians, minima and maxima by a category or a time period,
# top or bottom N, share of total, change between periods. The planner read the
# request: the operation (CONFIG["intent"]), the columns it names, where it may name a
# value, months, years and a period (CONFIG["reading"]); this script matches them
# against the data, computes the answer, and writes a small result table (CSV), a bar
# or line chart (PNG) and a short report (Markdown).
CONFIG = json.loads(__SANDALYST_CONFIG__)

LANG = CONFIG.get("lang", "en")
ASCII = bool(CONFIG.get("ascii"))
OUT = CONFIG["outputs"]
INTENT = CONFIG.get("intent") or {}
READ = CONFIG["reading"]
T = json.loads(__SANDALYST_TEXTS__("aggregate"))[LANG]

df, cached = load_table(CONFIG["input"], CONFIG.get("kind", "csv"), CONFIG.get("sheet"))
n_all = len(df)
time_col, time_unit, numeric, cats, ids = column_roles(df)
ts = parse_times(df[time_col], time_unit) if time_col else None
measures = [c for c in numeric if c not in ids]
groupable = [c for c in cats if df[c].nunique(dropna=True) <= 500] + \
    [c for c in ids if df[c].nunique(dropna=True) <= 50]
named = named_columns(READ, measures + groupable)
named_measures = [c for c in named if c in measures]
named_groups = [c for c in named if c in groupable]

# ---- filters: values of categorical columns, months, years named in the request ------
mask = pd.Series(True, index=df.index)
filters = []
value_groups = {}
for c in groupable:
    hits = values_named(READ, df[c])
    if hits and len(hits) < len(df[c].dropna().astype(str).unique()):
        value_groups[c] = hits
for c, vs in value_groups.items():
    mask &= df[c].astype(str).isin(vs)
    filters.append("%s = %s" % (c, " / ".join(vs)))
months, years = READ["months"], READ["years"]
period = READ["period"]
change = bool(INTENT.get("change"))
if ts is not None and not change:
    if months:
        mask &= ts.dt.month.isin(months)
        filters.append(", ".join(MONTH_NAMES[LANG][m - 1] for m in months))
    if years:
        mask &= ts.dt.year.isin(years)
        filters.append(", ".join(str(y) for y in years))
elif ts is not None and years and len(set(years)) == 1 and len(months) >= 2:
    mask &= ts.dt.year.isin(years)
    filters.append(str(years[0]))

# ---- what to compute -------------------------------------------------------------------
op = INTENT.get("op")
measure = named_measures[0] if named_measures else None
if op == "count" and measure and named_after(READ, measure, "counted"):
    op = "sum"  # "how many units": the units add up, the rows are not counted
notes = []
# A measure the request names that no column holds ("profit" with only sales): the
# money column, or the previous question's measure, would answer another question.
absent = [m["word"] for m in READ["measures_said"] if not any(c in measures for c in m["held_by"])]
PREV = CONFIG.get("previous") or {}
same_table = PREV.get("input") == CONFIG["input"] and not absent
if measure is None and same_table and op is None and PREV.get("op") == "count" and not INTENT.get("share"):
    op = "count"
    notes.append(T["as_before"] % T["count"])
if op == "count":
    measure = None
elif measure is None and same_table and PREV.get("measure") in measures:
    # a follow-up ("now by month") keeps the measure, and the operation unless it names one
    measure = PREV["measure"]
    if op is None and PREV.get("op") not in (None, "count"):
        op = PREV["op"]
    notes.append(T["as_before"] % measure)
elif measure is None:
    pool = [c for c in measures if not is_temperature(c)] or measures
    if not pool:
        op = "count"
    else:
        # money first (revenue, sales, amount), else the first numeric column
        money = [c for c in pool if c in READ["money"]]
        if absent or not money:
            # No column to compute on was named and none is the obvious one (revenue,
            # sales): picking one would answer another question.
            why = T["absent"] % ('"%s"' % absent[0], ", ".join(pool[:12])) if absent \
                else T["which_measure"] % ", ".join(pool[:12])
            emit_answer({"skill": "aggregate", "ok": False, "lang": LANG, "input": CONFIG["input"],
                         "cached": cached, "reason": why})
            return
        measure = money[0]
        notes.append(T["assumed"] % measure)
if op is None and measure is not None:
    mt = tokens(measure) + [norm(measure)]
    level = any(any(w in t for w in LEVEL_WORDS) for t in mt) or measure_unit(measure)[1] == "power" or is_temperature(measure)
    op = "mean" if level and not INTENT.get("share") else "sum"
op = op or "count"

group_col = None
group_period = None
if named_groups:
    # a column named only to filter on its values is not the grouping; one named
    # right after by/per/each is; "the median price of products ordered in December"
    # names the rows, not a grouping: a named column groups only after by/per/each,
    # a question word ("which region"), or in a ranking
    named_groups.sort(key=lambda c: not named_after(READ, c, "by"))
    ranks = INTENT.get("extreme") or INTENT.get("top_n") or INTENT.get("share")
    named_groups = [c for c in named_groups if ranks or named_after(READ, c, "by") or named_after(READ, c, "asks")]
    for c in named_groups:
        if c not in value_groups or len(value_groups[c]) > 1:
            group_col = c
            break
if group_col is None:
    # "compare North and South": several values of one column are its groups
    several = [c for c, vs in value_groups.items() if len(vs) > 1]
    if several:
        group_col = several[0]
group2 = None
if group_col is not None and not change:
    # "by region and product": a second category column named after the first
    rest = [c for c in named_groups if c != group_col and (c not in value_groups or len(value_groups[c]) > 1)]
    rest = [c for c in rest if named_after(READ, c, "joins")]
    if rest and named_after(READ, group_col, "by"):
        group2 = rest[0]
if group_col is None and period and ts is not None and not change:
    group_period = period
    # "the median daily sales across all stores": a period said only as an adjective,
    # over several rows a period, asks for one statistic of the periods' totals or of
    # the rows, never a list per period; which is not read here, so it is declined.
    if READ["adjective_period"] and op in ("mean", "median") and not INTENT.get("trend"):
        keys = period_key(ts[mask], period, LANG)[0]
        if keys.duplicated().any():
            emit_answer({"skill": "aggregate", "ok": False, "lang": LANG, "input": CONFIG["input"],
                         "cached": cached, "reason": T["per_period"] % (T[op], T[op])})
            return
ranking = INTENT.get("extreme") and op not in ("min", "max")
# "satisfaction by gender" with no gender column: a grouping asked for that no column
# or period gives; the overall figure would answer another question.
if group_col is None and group_period is None and not change and READ["per_noun"]:
    few = [c for c in groupable if 2 <= df[c].nunique(dropna=True) <= 50]
    emit_answer({"skill": "aggregate", "ok": False, "lang": LANG, "input": CONFIG["input"],
                 "cached": cached, "reason": T["no_group"] % (READ["per_noun"], ", ".join(few[:12]) or "-")})
    return
if group_col is None and group_period is None and not change:
    if (ranking or INTENT.get("top_n") or INTENT.get("share")) and value_groups:
        group_col = list(value_groups)[0]
    elif ranking or INTENT.get("top_n") or INTENT.get("share"):
        # "which ... sold the most": the categorical column with few values
        # No column to group by was named: choosing one would answer another question.
        few = [c for c in groupable if 2 <= df[c].nunique(dropna=True) <= 50]
        emit_answer({"skill": "aggregate", "ok": False, "lang": LANG, "input": CONFIG["input"],
                     "cached": cached, "reason": T["which_group"] % (", ".join(few[:12]) or "-")})
        return

d = df[mask]
dts = ts[mask] if ts is not None else None
value_name = T["count_label"] if op == "count" else "%s_%s" % (ascii_text(T[op]).replace(" ", "_"), measure)
op_text = T[op] if op == "count" else T["op_fmt"] % (T[op], measure)
filter_text = "; ".join(filters) if filters else T["nofilter"]


def agg(frame, keys):
    if op == "count":
        return frame.groupby(keys).size()
    vals = numeric[measure][frame.index]
    g = vals.groupby(keys)
    return {"sum": g.sum, "mean": g.mean, "median": g.median, "min": g.min, "max": g.max}[op]()


def overall(frame):
    if op == "count":
        return float(len(frame))
    v = numeric[measure][frame.index]
    return float({"sum": v.sum, "mean": v.mean, "median": v.median, "min": v.min, "max": v.max}[op]())


answer = {"skill": "aggregate", "ok": True, "lang": LANG, "input": CONFIG["input"], "cached": cached,
          "op": op, "measure": measure, "group": group_col or group_period, "filters": filters,
          "rows_used": int(len(d)), "rows": n_all}
fig, table, headline = None, None, ""
chart = INTENT.get("chart")
if len(d) == 0:
    answer["ok"] = False
    answer["reason"] = T["no_rows"] % filter_text
    emit_answer(answer)
    return

if change and ts is not None:
    # ---- change between two periods (months named, else the last two periods) ------
    per = period if period not in (None, "weekday", "hour") else "month"  # a calendar period
    k, lab = period_key(dts, per, LANG)
    keys_sorted = sorted(k.dropna().unique())
    if len(months) >= 2:
        want = [mm for mm in months[:2]]
        pick = [x for x in keys_sorted if int(x) % 100 in want] if per == "month" else keys_sorted[-2:]
        by_m = {}
        for x in pick:
            by_m.setdefault(int(x) % 100, x)
        chosen = [by_m[m] for m in want if m in by_m]
    else:
        chosen = keys_sorted[-2:]
    if len(chosen) < 2:
        answer["ok"] = False
        answer["reason"] = T["no_periods"]
        emit_answer(answer)
        return
    a, b = chosen[0], chosen[1]
    la, lb = lab[k == a].iloc[0], lab[k == b].iloc[0]
    if group_col:
        va = agg(d[k == a], d[k == a][group_col].astype(str))
        vb = agg(d[k == b], d[k == b][group_col].astype(str))
        res = pd.DataFrame({la: va, lb: vb}).fillna(0.0)
    else:
        res = pd.DataFrame({la: [overall(d[k == a])], lb: [overall(d[k == b])]}, index=[T["all"]])
    res[T["change"]] = res[lb] - res[la]
    res[T["change_pct"]] = np.where(res[la] != 0, 100.0 * res[T["change"]] / res[la].abs(), np.nan)
    res = res.sort_values(T["change"], ascending=bool(INTENT.get("lowest")))
    gname = group_col or T["all"]
    table = res.reset_index().rename(columns={"index": gname})
    table.columns = [gname] + list(table.columns[1:])
    parts = []
    for g, r in res.iterrows():
        pct = "" if not np.isfinite(r[T["change_pct"]]) else ", %+.1f %%" % r[T["change_pct"]]
        parts.append("%s: %s -> %s (%s%s)" % (g, fmt(r[la]), fmt(r[lb]),
                                              ("+" if r[T["change"]] > 0 else "") + fmt(r[T["change"]]), pct))
    headline = "%s, %s %s %s %s: %s." % (op_text[0].upper() + op_text[1:], T["from"], la, T["to"], lb,
                                        "; ".join(parts[:12]))
    fig, ax = plt.subplots(figsize=(9, 5))
    x = np.arange(len(res))
    ax.bar(x - 0.2, res[la].values, 0.4, label=str(la), color="#9ab")
    ax.bar(x + 0.2, res[lb].values, 0.4, label=str(lb), color="#2a6f97")
    if (res[[la, lb]].stack().dropna() >= 0).all():
        ax.set_ylim(bottom=0)
    ax.set_xticks(x)
    ax.set_xticklabels([say(i, ASCII) for i in res.index], rotation=30 if len(res) > 5 else 0, ha="right" if len(res) > 5 else "center")
    ax.set_ylabel(cap(say(op_text, ASCII)))
    ax.set_title(cap(say("%s: %s %s %s" % (op_text, la, T["to"], lb), ASCII)))
    ax.legend()
elif group_col or group_period:
    # ---- by category or by period ---------------------------------------------------
    if group_col and group2:
        keys = d[group_col].astype(str) + " / " + d[group2].astype(str)
        res = agg(d, keys)
        ordered = res.sort_values(ascending=bool(INTENT.get("lowest")), kind="mergesort")
        gname = "%s / %s" % (group_col, group2)
        is_time = False
    elif group_col:
        keys = d[group_col].astype(str)
        res = agg(d, keys)
        ordered = res.sort_values(ascending=bool(INTENT.get("lowest")), kind="mergesort")
        gname = group_col
        is_time = False
    else:
        k, lab = period_key(dts, group_period, LANG)
        res_k = agg(d, k)
        labels = dict(zip(k, lab))
        res = pd.Series(res_k.values, index=[labels[x] for x in res_k.index])
        ordered = res.sort_values(ascending=bool(INTENT.get("lowest")), kind="mergesort")
        gname = T["period_column"][group_period]
        is_time = True
    total = float(res.sum()) if op in ("sum", "count") else None
    n = INTENT.get("top_n")
    ranked = bool(n or INTENT.get("extreme") or INTENT.get("share")) or not is_time
    shown = ordered if ranked else res
    if n:
        shown = ordered.head(int(n))
    table = pd.DataFrame({gname: list(shown.index), value_name: list(shown.values)})
    if group2:
        split = table[gname].str.split(" / ", n=1, expand=True)
        table.insert(0, group_col, split[0])
        table.insert(1, group2, split[1])
    if INTENT.get("share") and total:
        table[T["share"]] = 100.0 * table[value_name] / total
    best = ordered.index[0]
    # The answer's values by name (a ticket's answer format): the top label and value.
    ties = [str(k) for k, v in ordered.items() if v == ordered.iloc[0]]
    answer["values"] = {"label": ties, "value": float(ordered.iloc[0]), op: float(ordered.iloc[0]),
                        "group": group_col if group_col and not group2 else None}
    if INTENT.get("extreme") and not n:
        headline = "%s %s %s %s (%s %s%s): %s" % (best, T["had"], T["lowest"] if INTENT.get("lowest") else T["highest"],
                                                  op_text, T["by"], gname.replace("_", " "),
                                                  (", " + filter_text) if filters else "", fmt(ordered.iloc[0]))
        if INTENT.get("share") and total:
            headline += " (%s)" % (T["share_of"] % local_num("%.1f" % (100.0 * ordered.iloc[0] / total)))
        if len(ordered) > 1:
            headline += "; %s: %s (%s)" % (T["next"], ordered.index[1], fmt(ordered.iloc[1]))
        headline += "."
    else:
        items = []
        for i, (g, v) in enumerate(zip(table[gname], table[value_name])):
            s = "%s %s" % (g, fmt(v))
            if T["share"] in table.columns:
                s += " (%s %%)" % local_num("%.1f" % table[T["share"]].iloc[i])
            items.append(s)
        lead = "%s %s %s%s" % (op_text[0].upper() + op_text[1:], T["by"], gname,
                               (" (%s)" % filter_text) if filters else "")
        if n:
            lead = "%s %d %s %s" % (T["bottom"] if INTENT.get("lowest") else T["top"], int(n), gname,
                                    T["by"] + " " + op_text)
        headline = "%s: %s%s." % (lead, ", ".join(items[:12]), " ..." if len(items) > 12 else "")
        if total is not None and not n:
            headline += " %s: %s." % (T["total"][0].upper() + T["total"][1:], fmt(total))
    fig, ax = plt.subplots(figsize=(9, 5))
    plot = shown if (ranked or chart == "bar") else res
    line = (chart == "line") or (is_time and chart != "bar" and not ranked)
    labels_x = [say(x, ASCII) for x in plot.index]
    if line:
        ax.plot(range(len(plot)), plot.values, marker="o", color="#2a6f97")
    else:
        bars = ax.bar(range(len(plot)), plot.values, color=["#d1495b" if x == best else "#2a6f97" for x in plot.index])
        if (plot.dropna() >= 0).all():
            # Bars of a non-negative quantity start at zero, so their heights compare.
            ax.set_ylim(bottom=0)
    ax.set_xticks(range(len(plot)))
    ax.set_xticklabels(labels_x, rotation=30 if len(plot) > 6 else 0, ha="right" if len(plot) > 6 else "center")
    ax.set_xlabel(say(gname, ASCII))
    ax.set_ylabel(cap(say(op_text, ASCII)))
    ax.set_title(cap(say("%s %s %s%s" % (op_text, T["by"], gname, (" (%s)" % filter_text) if filters else ""), ASCII)))
    ax.grid(axis="y", alpha=0.3)
else:
    # ---- one number ----------------------------------------------------------------------
    v = overall(d)
    answer["values"] = {"value": float(v), op: float(v), "count": int(len(d)) if op == "count" else None}
    table = pd.DataFrame({value_name: [v], T["rows"]: [len(d)]})
    headline = "%s%s: %s." % (op_text[0].upper() + op_text[1:], (" (%s)" % filter_text) if filters else "", fmt(v))
    fig = None

if group2 and not change:
    table = table.drop(columns=["%s / %s" % (group_col, group2)])
fig_ok = fig is not None
if fig_ok:
    fig.tight_layout()


def plan_text():
    # What was computed, said before the result, as the statistics skill does.
    what = op_text
    if group_col and group2:
        what += " %s %s, %s" % (T["by"], group_col, group2)
    elif group_col or group_period:
        what += " %s %s" % (T["by"], group_col or gname)
    if change:
        what += " %s" % T["between"]
    text = "%s %s %d %s" % (what, T["over"], len(d), T["rows"])
    if filters:
        text += " (%s)" % filter_text
    if measure and op != "count":
        miss = int(numeric[measure][d.index].isna().sum())
        if miss:
            plural = "" if miss == 1 else "s"
            if LANG == "es":
                text += "; " + T["missing"] % (miss, "" if miss == 1 else "es", plural, measure)
            else:
                text += "; " + T["missing"] % (miss, plural, measure)
    return text


headline = say("%s: %s.\n\n%s" % (T["computed"], plan_text(), headline), ASCII)
report = ["# %s" % T["title"], "", "**%s:** %s" % (T["question"], CONFIG["request"].strip()), "",
          "**%s:** %s" % (T["answer"], headline), "", "## %s" % T["result"], "",
          md_table(list(table.columns), table.head(50).values.tolist()), "", "## %s" % T["method"], "",
          "- %s: %s" % (T["file"], CONFIG["input"]),
          "- " + T["used"] % (len(d), n_all, filter_text)]
if group_col or group_period:
    report.append("- " + T["grouped"] % (group_col or group_period, T[op], measure or T["rows"]))
else:
    report.append("- " + T["overall"] % (T[op], measure or T["rows"]))
for note in notes:
    report.append("- " + note)
report += ["", T["computed_with_pandas"]]
out = dict(OUT)
if not fig_ok:
    out.pop("png", None)
files = finish_outputs(out, table, fig, report, ASCII)
answer.update({"headline": headline, "notes": [say(n, ASCII) for n in notes]})
answer.update(table_answer(table, files, T, ASCII))
print(headline)
emit_answer(answer)
