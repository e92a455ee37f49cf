# Sandalyst offline analyst (rule-based, not an LLM): relationships.
# Correlation between two columns named in the request (Pearson r, Spearman rho, a
# least-squares line, scatter plot), or a trend over time (the measure summed or
# averaged per period, a least-squares slope per period, line chart). The columns,
# values and period the request names are the planner's reading (CONFIG["reading"]);
# writes a small result table (CSV), the chart (PNG) and a report (Markdown).
CONFIG = json.loads(__SANDALYST_CONFIG__)

LANG = CONFIG.get("lang", "en")
ASCII = bool(CONFIG.get("ascii"))
OUT = CONFIG["outputs"]
INTENT = CONFIG.get("intent") or {}
READ = CONFIG["reading"]
T = json.loads(__SANDALYST_TEXTS__("relate"))[LANG]
PERIOD_WORD = T["period_words"]

df, cached = load_table(CONFIG["input"], CONFIG.get("kind", "csv"), CONFIG.get("sheet"))
time_col, time_unit, numeric, cats, ids = column_roles(df)
measures = [c for c in numeric if c not in ids]
named = named_columns(READ, measures + [c for c in cats if df[c].nunique(dropna=True) <= 500])
named_cats = [c for c in named if c not in measures]
named = [c for c in named if c in measures]
notes = []
answer = {"skill": "relate", "ok": True, "lang": LANG, "input": CONFIG["input"], "cached": cached}
trend = bool(INTENT.get("trend")) and not (len(named) >= 2 and not READ["time_said"])
fig, ax = plt.subplots(figsize=(9, 5.5))
if trend and time_col is None:
    answer.update({"ok": False, "reason": T["need_time"]})
elif not trend and named_cats and len(named) < 2:
    answer.update({"ok": False, "reason": T["category"] % (named_cats[0], (named or measures or ["?"])[0], named_cats[0])})
elif not trend and len(measures) < 2:
    answer.update({"ok": False, "reason": T["need_two"]})
elif not trend:
    cols = list(named[:2])
    if not cols:
        # the strongest pair
        cm = pd.DataFrame({c: numeric[c] for c in measures}).corr().abs()
        pairs = [(cm.iloc[i, j], measures[i], measures[j]) for i in range(len(measures))
                 for j in range(i + 1, len(measures)) if cm.iloc[i, j] == cm.iloc[i, j]]
        if pairs:
            _, a, b = max(pairs, key=lambda p: p[0])
            cols = [a, b]
            notes.append(T["assumed"] % ", ".join(cols))
    if len(cols) < 2:
        pool = [c for c in measures if c not in cols]
        if cols:
            pool.sort(key=lambda c: -abs(numeric[cols[0]].corr(numeric[c])) if numeric[c].notna().sum() > 2 else 0)
        cols += pool[: 2 - len(cols)]
        notes.append(T["assumed"] % ", ".join(cols))
    xa, ya = cols[0], cols[1]
    both = pd.DataFrame({"x": numeric[xa], "y": numeric[ya]}).dropna()
    r = float(both["x"].corr(both["y"]))
    rho = float(both["x"].rank().corr(both["y"].rank()))
    slope, icpt = np.polyfit(both["x"], both["y"], 1) if len(both) > 2 else (float("nan"), float("nan"))
    a = abs(r)
    strength = T["strong"] if a >= 0.7 else T["moderate"] if a >= 0.4 else T["weak"] if a >= 0.2 else None
    if strength:
        headline = T["corr"] % (xa, ya, strength, T["pos"] if r > 0 else T["neg"], local_num("%.3f" % r), local_num("%.3f" % rho),
                                len(both), ya, fmt(icpt), fmt(slope), xa)
        if LANG == "es":
            headline = T["corr"] % (xa, ya, T["pos"] if r > 0 else T["neg"], strength, local_num("%.3f" % r), local_num("%.3f" % rho),
                                    len(both), ya, fmt(icpt), fmt(slope), xa)
    else:
        headline = T["corr_none"] % (xa, ya, local_num("%.3f" % r), local_num("%.3f" % rho), len(both))
    # Unrounded: the report's table rounds once, like the sentence (0.95048 is 0.950,
    # never 0.9505 then 0.951).
    table = pd.DataFrame({T["stat"]: [T["pearson"], T["spearman"], T["r2"], T["slope"], T["intercept"], T["n"]],
                          T["value"]: [r, rho, r * r, slope, icpt, len(both)]})
    sample = both.sample(n=min(len(both), 5000), random_state=0) if len(both) > 5000 else both
    ax.scatter(sample["x"], sample["y"], s=12, alpha=0.6, color="#2a6f97")
    xs = np.linspace(both["x"].min(), both["x"].max(), 50)
    ax.plot(xs, icpt + slope * xs, color="#d1495b", label="r = %.3f" % r)
    ax.set_xlabel(say(xa, ASCII))
    ax.set_ylabel(say(ya, ASCII))
    ax.set_title(cap(say("%s vs %s" % (ya, xa), ASCII)))
    ax.legend()
    method = T["method_corr"]
    answer.update({"x": xa, "y": ya, "pearson_r": r, "spearman_rho": rho, "slope": slope, "n": len(both)})
    # The answer's values by name (a ticket's answer format), with the p-value of r.
    p_value = None
    if len(both) > 2:
        import scipy.stats as sst
        p_value = float(sst.pearsonr(both["x"], both["y"])[1])
    answer["values"] = {"r": r, "p_value": p_value, "rho": rho, "n": int(len(both)), "value": r}
    title = T["title"]
else:
    # Values of a category named in the request ("in Bilbao"): the trend of those
    # rows, said; several values of one column ("Bilbao and Madrid") ask for trends
    # side by side, which this skill does not draw: declined, never one pooled trend.
    kept = pd.Series(True, index=df.index)
    several = None
    for c in cats:
        hits = values_named(READ, df[c], free_only=False)
        if len(hits) > 1:
            several = (c, hits)
        elif hits:
            kept &= df[c].astype(str) == hits[0]
            notes.append(T["only_rows"] % (c, hits[0]))
    ts = parse_times(df[time_col], time_unit).where(kept)
    pool = [c for c in (named or measures) if not (is_temperature(c) and not named)] or measures
    if several:
        answer.update({"ok": False, "reason": T["several"] % (", ".join(several[1]), several[0])})
    elif not pool:
        answer.update({"ok": False, "reason": T["need_two"]})
    else:
        m = pool[0]
        if not named:
            notes.append(T["assumed"] % m)
        per = READ["period"]
        span = (ts.max() - ts.min()) if ts.notna().any() else pd.Timedelta(0)
        if per not in ("hour", "day", "week", "month", "quarter", "year"):
            per = "day" if span <= pd.Timedelta(days=120) else "week" if span <= pd.Timedelta(days=730) else "month"
        mt = tokens(m) + [norm(m)]
        level = any(any(w in t for w in LEVEL_WORDS) for t in mt) or measure_unit(m)[1] == "power" or is_temperature(m)
        how = "mean" if level else "sum"
        k, lab = period_key(ts, per, LANG)
        ok = ts.notna() & numeric[m].notna()
        g = numeric[m][ok].groupby(k[ok])
        series = g.mean() if how == "mean" else g.sum()
        labels = dict(zip(k[ok], lab[ok]))
        x = np.arange(len(series), dtype=float)
        slope, icpt = np.polyfit(x, series.values.astype(float), 1)
        fitted = icpt + slope * x
        pct = 100.0 * (fitted[-1] - fitted[0]) / abs(fitted[0]) if fitted[0] else float("nan")
        pw = PERIOD_WORD[per]
        direction = T["up"] if slope > 0 else T["down"]
        if abs(pct) < 2:
            direction = T["flat"]
        first, last = labels[series.index[0]], labels[series.index[-1]]
        how_word = T["summed"] if how == "sum" else T["averaged"]
        headline = T["trend"] % (T["avg_of"] % m if how == "mean" else m, pw, direction, ("+" if slope > 0 else "") + fmt(slope), pw,
                                 fmt(series.iloc[0]), first, fmt(series.iloc[-1]), last,
                                 ("+" if pct > 0 else "") + local_num("%.1f" % pct) + " ", len(series) - 1, pw)
        headline = re.sub(r"\s+%", " %", headline)
        table = pd.DataFrame({T["period"]: [labels[i] for i in series.index], m: series.values, T["fitted"]: fitted})
        ax.plot(range(len(series)), series.values, marker="o" if len(series) <= 60 else None, color="#2a6f97", label=say(m, ASCII))
        ax.plot(range(len(series)), fitted, color="#d1495b", linestyle="--",
                label=say("%s: %s%s / %s" % (T["fitted"], "+" if slope > 0 else "", fmt(slope), pw), ASCII))
        step = max(1, len(series) // 12)
        ax.set_xticks(list(range(0, len(series), step)))
        ax.set_xticklabels([say(labels[series.index[i]], ASCII) for i in range(0, len(series), step)], rotation=30, ha="right")
        ax.set_ylabel(say(m, ASCII))
        ax.set_title(cap(say("%s: %s %s %s" % (T["title_trend"], m, T["per"], pw), ASCII)))
        ax.legend()
        method = T["method_trend"] % (how_word, pw, pw)
        title = T["title_trend"]
        answer.update({"measure": m, "period": per, "slope": slope, "change_pct": pct, "periods": len(series)})

if not answer["ok"]:
    plt.close(fig)
    emit_answer(answer)
else:
    ax.grid(alpha=0.3)
    fig.tight_layout()
    headline = say(headline, ASCII)
    report = ["# %s" % title, "", "**%s:** %s" % (T["question"], CONFIG["request"].strip()), "",
              "**%s:** %s" % (T["answer"], headline), "", "## %s" % T["result"], "",
              md_table(list(table.columns), table.head(60).values.tolist()), "", "## %s" % T["method"], "",
              "- %s: %s" % (T["file"], CONFIG["input"]), "- " + method]
    report += ["- " + n for n in notes]
    files = finish_outputs(OUT, table, fig, report, ASCII)
    print(headline)
    answer.update({"headline": headline, "notes": [say(n, ASCII) for n in notes]})
    answer.update(table_answer(table, files, T, ASCII))
    emit_answer(answer)
