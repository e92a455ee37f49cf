# Sandalyst offline analyst (rule-based, not an LLM): a data profile of one table.
# Rows, columns, types, missing values, ranges, top categories, duplicated rows; one
# distribution chart (histogram) per numeric column, all in one figure; a table with
# one row per column (CSV) and a report (Markdown). Also the answer's second half when
# the request is outside every skill.
CONFIG = json.loads(__SANDALYST_CONFIG__)

LANG = CONFIG.get("lang", "en")
ASCII = bool(CONFIG.get("ascii"))
OUT = CONFIG["outputs"]
T = json.loads(__SANDALYST_TEXTS__("profile"))[LANG]

df, cached = load_table(CONFIG["input"], CONFIG.get("kind", "csv"), CONFIG.get("sheet"))
time_col, time_unit, numeric, cats, ids = column_roles(df)
rows = []
num_cols = [c for c in numeric if c not in ids]
cat_summ = []
for c in df.columns:
    s = df[c]
    miss = int(s.isna().sum())
    row = {T["column"]: c, T["non_missing"]: int(len(s) - miss), T["missing"]: miss,
           T["distinct"]: int(s.nunique(dropna=True)), T["min"]: "", T["max"]: "", T["mean"]: "", T["top"]: ""}
    if c == time_col:
        t = parse_times(s, time_unit).dropna()
        row[T["type"]] = T["datetime"]
        if len(t):
            row[T["min"]], row[T["max"]] = str(t.min()), str(t.max())
    elif c in numeric:
        v = numeric[c]
        row[T["type"]] = T["numeric"] if c not in ids else T["category"]
        if v.notna().any():
            row[T["min"]], row[T["max"]], row[T["mean"]] = fmt(v.min()), fmt(v.max()), fmt(v.mean())
    else:
        vc = s.dropna().astype(str).value_counts()
        row[T["type"]] = T["category"] if len(vc) <= max(50, 0.5 * len(s)) else T["text"]
        top = ", ".join("%s (%d)" % (k, n) for k, n in vc.head(3).items())
        row[T["top"]] = top
        if row[T["type"]] == T["category"]:
            cat_summ.append("%s: %s" % (c, top))
    rows.append(row)
cols = [T["column"], T["type"], T["non_missing"], T["missing"], T["distinct"], T["min"], T["max"], T["mean"], T["top"]]
table = pd.DataFrame(rows)[cols]
missing = int(df.isna().sum().sum())
dups = int(df.duplicated().sum())
cells = max(1, df.shape[0] * df.shape[1])
name = CONFIG["input"]
lines = [T["head"] % (name, local_num(len(df)), df.shape[1], local_num(missing), local_num("%.1f" % (100.0 * missing / cells)), local_num(dups))]
if time_col:
    t = parse_times(df[time_col], time_unit).dropna()
    if len(t):
        lines.append(T["time"] % (time_col, t.min(), t.max()))
if num_cols:
    lines.append(T["numcols"] % "; ".join("%s %s..%s" % (c, fmt(numeric[c].min()), fmt(numeric[c].max()))
                                            for c in num_cols[:8]))
if cat_summ:
    lines.append(T["catcols"] % "; ".join(cat_summ[:5]))
others = [p for p in CONFIG.get("other_tables", []) if p != name]
if others:
    lines.append(T["others"] % ", ".join(others))

fig = None
plot_cols = num_cols[:12]
if plot_cols:
    ncol = min(3, len(plot_cols))
    nrow = (len(plot_cols) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.2 * nrow + 0.6), squeeze=False)
    for i, c in enumerate(plot_cols):
        ax = axes[i // ncol][i % ncol]
        v = numeric[c].dropna()
        if v.nunique() <= 20 and (v == v.round()).all():
            vc = v.value_counts().sort_index()  # few whole values (scores, counts): one bar each
            ax.bar([fmt(x) for x in vc.index], vc.values, color="#2a6f97", edgecolor="white")
        else:
            ax.hist(v, bins=min(30, max(5, int(v.nunique()))), color="#2a6f97", edgecolor="white")
        ax.set_title(say(c, ASCII), fontsize=10)
        ax.set_ylabel(say(T["frequency"], ASCII), fontsize=8)
        ax.tick_params(labelsize=8)
    for j in range(len(plot_cols), nrow * ncol):
        axes[j // ncol][j % ncol].axis("off")
    fig.suptitle(say("%s: %s" % (T["charts"], os.path.basename(name)), ASCII))
    fig.tight_layout()

report = ["# %s: %s" % (T["title"], os.path.basename(name)), "", "## %s" % T["overview"], ""]
report += ["- " + l for l in lines]
report += ["", "## %s" % T["columns"], "", md_table(cols, table.fillna("").values.tolist())]
if fig is not None:
    report += ["", "## %s" % T["charts"], "", "![](%s)" % os.path.basename(OUT["png"])]
out = dict(OUT)
if fig is None:
    out.pop("png", None)
files = finish_outputs(out, table, fig, report, ASCII)
headline = say(" ".join(lines), ASCII)
print(headline)
emit_answer({"skill": "profile", "ok": True, "lang": LANG, "input": name, "cached": cached,
             "rows": int(len(df)), "columns_count": int(df.shape[1]), "missing": missing, "duplicates": dups,
             "headline": headline, "notes": [], **table_answer(table[cols[:5]], files, T, ASCII)})
