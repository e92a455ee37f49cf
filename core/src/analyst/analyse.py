# Sandalyst offline analyst (rule-based, not an LLM), step 2 of 4: find abnormal events.
# Expected baseline = median by hour of week, adjusted for outdoor temperature with a
# robust (Huber) heating/cooling degree model; residuals -> robust z-scores
# (median/MAD x 1.4826); |z| >= threshold -> flagged readings -> grouped into events;
# small or isolated deviations are ignored as normal noise. Writes the event table
# (CSV), a chart (PNG) and a report (Markdown) in the request's language (English always
# plain ASCII, Spanish too when asked), with the words of texts.toml's [anomaly]. CONFIG below was
# filled in by the planner from the inspection step.
CONFIG = json.loads(__SANDALYST_CONFIG__)

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import matplotlib.ticker as mticker

MODE = CONFIG.get("mode", "full")  # "full", or "simple" (fallback: no temperature model)
Z_T = float(CONFIG.get("z_threshold", 3.5))  # a reading is flagged at |z| >= Z_T
Z_EXT = float(CONFIG.get("z_extend", 2.0))  # events extend over neighbours with |z| >= Z_EXT
Z_SINGLE = float(CONFIG.get("z_single", 6.0))  # a lone flagged reading must reach this
MATERIAL = float(CONFIG.get("materiality", 0.10))  # peak deviation >= 10 % of typical level
OUT = CONFIG["outputs"]
for _p in OUT.values():
    os.makedirs(os.path.dirname(_p) or ".", exist_ok=True)
TIME_FMT = "%Y-%m-%d %H:%M"
ANOMALY_TEXTS = json.loads(__SANDALYST_TEXTS__("anomaly"))
LANG = CONFIG.get("lang") if CONFIG.get("lang") in ANOMALY_TEXTS else "en"
T = ANOMALY_TEXTS[LANG]
EN = ANOMALY_TEXTS["en"]  # the explanations of the events stay in English
PLAIN = LANG == "en" or bool(CONFIG.get("ascii"))  # the report and chart in plain ASCII


def out(s):
    """Text of the report and the chart: plain ASCII when PLAIN, else as it is."""
    return ascii_text(s) if PLAIN else str(s)


def td_text(td):
    """A time step in words of the report's language ("1 h", "2 days", "2 d\u00edas")."""
    return fmt_td(td).replace("days", T["days_word"]).replace("day", T["day"])


def plural(n, pair):
    return pair[0] if n == 1 else pair[1]


def mad_scale(v):
    """1.4826 x the median absolute deviation of the finite values (nan if none)."""
    v = np.asarray(v, dtype=float)
    v = v[np.isfinite(v)]
    n = len(v)
    if n == 0:
        return float("nan")
    # np.median's result, bit for bit, without its overhead (the model fit below calls
    # this thousands of times): the middle order statistic, or the mean of the two.
    h = n // 2
    kth = [h] if n % 2 else [h - 1, h]

    def mid(p):
        return p[h] if n % 2 else (p[h - 1] + p[h]) / 2.0

    m = mid(np.partition(v, kth))
    return 1.4826 * float(mid(np.partition(np.abs(v - m), kth)))


# ---- 1. load, clean, regularise -----------------------------------------------------
src = CONFIG["input"]
parts = read_tables(src, CONFIG.get("kind", "csv"))
sheet = CONFIG.get("sheet")
df = dict(parts).get(sheet, parts[0][1]) if sheet else parts[0][1]
df.columns = [str(c) for c in df.columns]
TCOL, YCOL, TEMPCOL = CONFIG["time_col"], CONFIG["measure_col"], CONFIG.get("temp_col")
notes = []
raw_rows = len(df)
cat = CONFIG.get("category_col")
if cat and cat in df.columns and df[cat].nunique(dropna=True) > 1:
    top = df[cat].astype(str).value_counts().index[0]
    df = df[df[cat].astype(str) == top]
    notes.append(T["several"] % (cat, top, len(df), raw_rows))

t = parse_times(df[TCOL], CONFIG.get("time_unit"))
y_raw = numeric_view(df[YCOL])
if y_raw is None:
    raise ValueError("column %r is not numeric" % YCOL)
temp_raw = numeric_view(df[TEMPCOL]) if TEMPCOL and TEMPCOL in df.columns else None
frame = pd.DataFrame({"t": t.values, "y": y_raw.astype(float).values})
frame["temp"] = temp_raw.astype(float).values if temp_raw is not None else np.nan
bad_time = int(frame["t"].isna().sum())
frame = frame.dropna(subset=["t"]).sort_values("t", kind="mergesort")
if len(frame) < 24:
    raise ValueError("only %d readings with a valid time; too few for a baseline" % len(frame))
n_dup = int(frame["t"].duplicated().sum())
frame = frame.groupby("t").mean()  # duplicated timestamps: averaged
steps = np.diff(frame.index.values).astype("timedelta64[ns]").astype(np.int64)
steps = steps[steps > 0]
interval = pd.Timedelta(int(np.median(steps)), unit="ns")
if interval <= pd.Timedelta(0):
    raise ValueError("could not infer the reading interval")
t0 = frame.index[0]
pos = (frame.index - t0) / interval
k = np.round(np.asarray(pos, dtype=float)).astype(np.int64)
off_grid = int(np.sum(np.abs(np.asarray(pos, dtype=float) - k) > 1e-6))
frame["k"] = k
frame = frame.groupby("k").mean()
n_grid = int(k.max()) + 1
if n_grid > max(50 * len(frame), 200000):
    raise ValueError("timestamps too irregular to put on a %s grid" % fmt_td(interval))
MAX_POINTS = 100000  # keeps the fit and the chart fast; finer data is aggregated
if n_grid > MAX_POINTS:
    factor = int(math.ceil(n_grid / MAX_POINTS))
    for _m in (15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080):
        cand = pd.Timedelta(minutes=_m)
        if cand >= interval * factor and cand % interval == pd.Timedelta(0):
            factor = int(cand / interval)
            break
    grp = frame.groupby(frame.index // factor)
    counts = grp["y"].count()
    agg = grp.mean()
    if CONFIG.get("measure_kind") == "energy":
        agg["y"] = agg["y"] * factor  # energy per interval adds up
    agg.loc[counts < 0.5 * factor, "y"] = np.nan
    notes.append(T["aggregated"] % (len(frame), td_text(interval), td_text(interval * factor),
                                    T["sums"] if CONFIG.get("measure_kind") == "energy" else T["means"]))
    frame, interval = agg, interval * factor
    n_grid = int(frame.index.max()) + 1
grid = pd.date_range(start=t0, periods=n_grid, freq=interval)
reg = frame.reindex(np.arange(n_grid))
y = reg["y"].to_numpy(dtype=float)
valid = np.isfinite(y)
n_missing = int((~valid).sum())
n_missing_rows = int(n_grid - len(frame))
dt_h = interval.total_seconds() / 3600.0
if interval >= pd.Timedelta(days=1):
    TIME_FMT = "%Y-%m-%d"
if n_dup > 0:
    notes.append(T["dups"] % n_dup)
if off_grid:
    notes.append(T["off_grid"] % (off_grid, td_text(interval)))
if bad_time:
    notes.append(T["bad_time"] % bad_time)

TUNIT = CONFIG.get("temp_unit") or "C"
temp = reg["temp"].to_numpy(dtype=float)
have_temp = TEMPCOL is not None and np.isfinite(temp).sum() >= 0.5 * valid.sum()
temp_c = (temp - 32.0) * 5.0 / 9.0 if TUNIT == "F" else temp.copy()
if have_temp:
    temp_c = pd.Series(temp_c).interpolate(limit=3, limit_area="inside").to_numpy()

hour = np.asarray(grid.hour)
dow = np.asarray(grid.day_of_week)
weekend = dow >= 5
level = float(np.nanmedian(np.abs(y))) if valid.any() else 0.0
if level <= 0:
    level = float(np.nanmax(np.abs(y))) if valid.any() else 1.0
UNIT = CONFIG.get("measure_unit") or ""
KIND = CONFIG.get("measure_kind") or "other"
if KIND == "power":
    EXCESS_UNIT = {"kW": "kWh", "W": "Wh", "MW": "MWh", "kVA": "kVAh"}.get(UNIT, (UNIT + "*h") if UNIT else "unit*h")
    EXCESS_FACTOR = dt_h
elif KIND == "energy":
    EXCESS_UNIT, EXCESS_FACTOR = (UNIT or "units"), 1.0
else:
    EXCESS_UNIT, EXCESS_FACTOR = (UNIT or "units") + " (sum of readings)", 1.0
# the unit of the table (CSV) stays as it is; the report and the answer say it in words
EXCESS_UNIT_TEXT = EXCESS_UNIT.replace(" (sum of readings)", T["sum_of_readings"])
if not UNIT and KIND != "power":
    EXCESS_UNIT_TEXT = EXCESS_UNIT_TEXT.replace("units", T["units"], 1)
U = (" " + UNIT) if UNIT else ""
_mins = interval.total_seconds() / 60.0
_other = td_text(interval).replace(" ", "-") if LANG == "en" else td_text(interval)
INTERVAL_WORD = T["interval_words"].get("%g" % _mins) or T["interval_other"] % _other
CADENCE = T["cadence"] % INTERVAL_WORD

# ---- 2. expected baseline --------------------------------------------------------------
def slot_count(sl):
    per = pd.Series(valid).groupby(sl).sum()
    return float(per[per > 0].median())


if interval >= pd.Timedelta(days=1):
    slot, slot_desc = dow.copy(), T["day_of_week"]
else:
    # slots at the data's own resolution (e.g. 30-min slots), so ramps are not blurred;
    # coarser when there are too few weeks for >= 5 readings per slot
    tod_len = max(1, int(round(pd.Timedelta(hours=1) / interval))) if interval < pd.Timedelta(hours=1) else 1
    minutes = hour * 60 + np.asarray(grid.minute)
    res_min = max(1, int(round(interval.total_seconds() / 60)))
    tod = minutes // res_min
    n_tod = int(tod.max()) + 1
    res_txt = "" if res_min == 60 else T["slots"] % td_text(interval)
    if res_min > 60:
        res_txt = ""
    slot, slot_desc = dow * n_tod + tod, T["hour_of_week" if res_min == 60 else "time_of_week"] + res_txt
    if slot_count(slot) < 5:
        slot = weekend * n_tod + tod
        slot_desc = T["hour_of_day" if res_min == 60 else "time_of_day"] + res_txt + T["split_week"]
        if slot_count(slot) < 5:
            slot, slot_desc = tod, T["hour_of_day" if res_min == 60 else "time_of_day"] + res_txt
samples_per_slot = int(pd.Series(valid).groupby(slot).sum().median())


def slot_profile(v):
    s = pd.Series(np.where(valid, v, np.nan))
    med = s.groupby(slot).median()
    out = pd.Series(slot).map(med).to_numpy(dtype=float)
    return np.where(np.isfinite(out), out, np.nanmedian(v[valid]))


def slot_profile_loo(v):
    """Leave-one-out slot median: each reading's expectation excludes the reading itself,
    so residuals are honest prediction errors (an in-sample median of ~8 values would
    shrink them by about a quarter and inflate the z-scores)."""
    out = slot_profile(v)
    vals = np.where(valid, v, np.nan)
    order = np.argsort(slot, kind="mergesort")
    bounds = np.flatnonzero(np.diff(slot[order])) + 1
    for grp in np.split(order, bounds):
        g = grp[np.isfinite(vals[grp])]
        m = len(g) - 1
        if m < 2:
            continue
        srt = np.argsort(vals[g], kind="mergesort")
        sv = vals[g][srt]
        rank = np.empty(len(g), dtype=np.int64)
        rank[srt] = np.arange(len(g))
        rem = lambda j: np.where(j < rank, sv[np.minimum(j, len(sv) - 1)], sv[np.minimum(j + 1, len(sv) - 1)])
        if m % 2 == 1:
            med = rem(np.full(len(g), m // 2))
        else:
            med = 0.5 * (rem(np.full(len(g), m // 2 - 1)) + rem(np.full(len(g), m // 2)))
        out[g] = med
    return out


def huber_fit(X, r, iters=30):
    beta = np.linalg.lstsq(X, r, rcond=None)[0]
    for _ in range(iters):
        res = r - X @ beta
        s = mad_scale(res)
        if not s > 0:
            break
        u = np.abs(res) / (1.345 * s)
        w = np.sqrt(np.where(u <= 1, 1.0, 1.0 / np.maximum(u, 1e-12)))
        nb = np.linalg.lstsq(X * w[:, None], r * w, rcond=None)[0]
        # np.allclose(nb, beta, rtol=1e-6, atol=1e-9), spelled out as numpy does it
        # (its own checks cost more than the test)
        if np.all((np.abs(nb - beta) <= 1e-9 + 1e-6 * np.abs(beta)) & np.isfinite(beta) | (nb == beta)):
            beta = nb
            break
        beta = nb
    return beta


def nonneg_huber(X, r):
    """Huber fit with the degree-day slopes (all columns but the intercept) kept >= 0."""
    cols = list(range(X.shape[1]))
    while True:
        b = huber_fit(X[:, cols], r)
        neg = [c for c, v in zip(cols, b) if c != 0 and v < 0]
        if not neg:
            beta = np.zeros(X.shape[1])
            beta[cols] = b
            return beta
        worst = min(neg, key=lambda c: b[cols.index(c)])
        cols.remove(worst)


def activity_weight(act, split):
    """Operating share of a slot: the continuous activity, or a step at `split`."""
    return act if split is None else (act > split).astype(float)


def degree_design(tc, hb, cb, act):
    H = np.maximum(hb - tc, 0.0)
    C = np.maximum(tc - cb, 0.0)
    return np.column_stack([np.ones_like(tc), H * act, H * (1 - act), C * act, C * (1 - act)])


def huber_loss(res, s):
    u = np.abs(res) / (1.345 * s)
    return float(np.sum(np.where(u <= 1, 0.5 * u * u, u - 0.5)))


base = slot_profile(y)
lo_b, hi_b = np.nanpercentile(base, 5), np.nanpercentile(base, 95)
# activity 0..1: where the slot's typical level sits between base load and full operation
active = np.clip((base - lo_b) / (hi_b - lo_b), 0.0, 1.0) if hi_b > lo_b else np.ones_like(base)
f = np.zeros_like(y)
temp_model = None
use_temp = MODE == "full" and have_temp
if use_temp:
    ok = valid & np.isfinite(temp_c)
    r0 = (y - base)[ok]
    s0 = mad_scale(r0) or 1.0
    tc_ok, act_ok = temp_c[ok], active[ok]
    slot_ok = slot[ok]

    _centered = {}

    def centered(key, col):
        """A degree-day column minus its slot median: the profile already holds each
        slot's typical temperature effect, so only deviations from it are comparable."""
        if key not in _centered:
            _centered[key] = col - pd.Series(col).groupby(slot_ok).transform("median").to_numpy()
        return _centered[key]

    best = None
    n_ok = int(ok.sum())
    # Candidates whose design is the same (a degree term without support is dropped, so
    # its balance point no longer matters; two splits can give the same step) share one
    # fit: it is a function of the design alone, so the search and its result are the
    # same, for a fraction of the fits.
    fits = {}
    for split in (None, 0.15, 0.3, 0.5):
        w_ok = activity_weight(act_ok, split)
        w_key = w_ok.tobytes()
        for hb in range(6, 25, 2):
            for cb in range(max(hb, 12), 29, 2):
                X = degree_design(tc_ok, hb, cb, w_ok)
                # a degree term needs support: >= 5 % of the readings beyond its balance point
                heat = not np.mean(tc_ok < hb) < 0.05
                cool = not np.mean(tc_ok > cb) < 0.05
                if not heat:
                    X[:, 1:3] = 0.0
                if not cool:
                    X[:, 3:5] = 0.0
                design = (w_key, hb if heat else None, cb if cool else None)
                if design not in fits:
                    keys = [None, ("h", hb, split, 1), ("h", hb, split, 0), ("c", cb, split, 1), ("c", cb, split, 0)]
                    Xc = X.copy()
                    for c in range(1, 5):
                        if X[:, c].any():
                            Xc[:, c] = centered(keys[c], X[:, c])
                    beta = nonneg_huber(Xc, r0)
                    res = r0 - Xc @ beta
                    # penalise each slope in use (BIC-like) so a term must earn its place
                    loss = huber_loss(res, s0) + math.log(n_ok) * int(np.sum(np.abs(beta[1:]) > 1e-12))
                    fits[design] = (loss, beta)
                loss, beta = fits[design]
                if best is None or loss < best[0] - 1e-9:
                    best = (loss, hb, cb, split, beta, X)
    _, HB, CB, SPLIT, beta, X = best
    # backfitting, started from the within-slot fit: profile of (y - f), then f on (y - profile)
    f = np.zeros_like(y)
    f[ok] = X[:, 1:] @ beta[1:]
    for _it in range(6):
        typical = pd.Series(np.where(ok, f, np.nan)).groupby(slot).median()
        fill = pd.Series(slot).map(typical).fillna(0.0).to_numpy()
        f = np.where(ok, f, fill)  # readings without temperature: their slot's typical effect
        base = slot_profile(y - f)
        beta = nonneg_huber(X, (y - base)[ok])
        f = np.zeros_like(y)
        f[ok] = X @ beta
    typical = pd.Series(np.where(ok, f, np.nan)).groupby(slot).median()
    f = np.where(ok, f, pd.Series(slot).map(typical).fillna(0.0).to_numpy())
    temp_model = {"hb": HB, "cb": CB, "split": SPLIT, "beta": [float(b) for b in beta]}
    _conv = (5.0 / 9.0) if TUNIT == "F" else 1.0  # slopes per deg C -> per deg F
    _to_u = (lambda c: c * 9 / 5 + 32) if TUNIT == "F" else (lambda c: c)
    _per = UNIT if UNIT else T["units"]
    _terms = []
    _on, _off = T["on_off_daily"] if interval >= pd.Timedelta(days=1) else T["on_off"]
    if beta[1] > 1e-9 or beta[2] > 1e-9:
        _terms.append(T["heating"] % (_to_u(HB), TUNIT, beta[1] * _conv, _per, TUNIT, _on, beta[2] * _conv, _off))
    if beta[3] > 1e-9 or beta[4] > 1e-9:
        _terms.append(T["cooling"] % (_to_u(CB), TUNIT, beta[3] * _conv, _per, TUNIT, _on, beta[4] * _conv, _off))
    found = "; ".join(_terms) if _terms else T["no_temp_dep"]
    op_text = T["op_cont"] if SPLIT is None else T["op_split"] % (100 * SPLIT)
base = slot_profile_loo(y - f)
expected = base + f
base_only = slot_profile_loo(y)
resid = y - expected

# ---- 3. robust z-scores ----------------------------------------------------------------
def robust_scale(res):
    glob = mad_scale(res[valid])
    if not np.isfinite(glob) or glob <= 0:
        glob = max(1e-9, 0.01 * level)
    floor = max(0.5 * glob, 0.005 * level, 1e-9)
    out = np.full(len(res), glob)
    if interval < pd.Timedelta(days=1):
        # pooled over the hour and its two neighbours (a steadier estimate than one hour)
        near = lambda h: (hour == h) | (hour == (h + 1) % 24) | (hour == (h - 1) % 24)
        by_hour = {}
        for h in np.unique(hour):
            m = valid & near(h)
            by_hour[h] = mad_scale(res[m]) if m.sum() >= 8 else glob
        for w in (False, True):
            for h in np.unique(hour):
                m = valid & near(h) & (weekend == w)
                sc = mad_scale(res[m]) if m.sum() >= 12 else by_hour[h]
                out[(hour == h) & (weekend == w)] = sc if np.isfinite(sc) else glob
    return np.maximum(out, floor), glob


scale, glob_scale = robust_scale(resid)
z = np.where(valid, resid / scale, np.nan)
scale0, _ = robust_scale(y - base_only)
z0 = np.where(valid, (y - base_only) / scale0, np.nan)
absz = np.abs(np.nan_to_num(z))
core = valid & (absz >= Z_T)

# ---- 4. events ---------------------------------------------------------------------------
max_gap = max(1, int(round(pd.Timedelta(hours=1) / interval))) if interval < pd.Timedelta(hours=1) else 1
spans = []  # [a, b, sign]
for i in np.flatnonzero(core):
    sgn = 1 if resid[i] > 0 else -1
    if spans and spans[-1][2] == sgn and i - spans[-1][1] - 1 <= max_gap:
        spans[-1][1] = i
    else:
        spans.append([i, i, sgn])
for sp in spans:  # hysteresis: extend over neighbours with the same sign and |z| >= Z_EXT
    while sp[0] > 0 and valid[sp[0] - 1] and np.sign(resid[sp[0] - 1]) == sp[2] and absz[sp[0] - 1] >= Z_EXT:
        sp[0] -= 1
    while sp[1] < n_grid - 1 and valid[sp[1] + 1] and np.sign(resid[sp[1] + 1]) == sp[2] and absz[sp[1] + 1] >= Z_EXT:
        sp[1] += 1
merged = []
for sp in spans:
    if merged and merged[-1][2] == sp[2] and sp[0] <= merged[-1][1] + 1:
        merged[-1][1] = max(merged[-1][1], sp[1])
    else:
        merged.append(list(sp))
spans = [sp + ["z"] for sp in merged]

# stuck meter: the same value repeated for >= 3 h (and >= 4 readings), value not zero
flat_min = max(4, int(math.ceil(pd.Timedelta(hours=3) / interval)))
same = valid[1:] & valid[:-1] & (y[1:] == y[:-1])
flat_share = float(same.sum()) / max(1, int((valid[1:] & valid[:-1]).sum()))
flat_runs = []
if flat_share < 0.05:
    i = 0
    while i < n_grid:
        j = i
        while j + 1 < n_grid and valid[j + 1] and valid[i] and y[j + 1] == y[i]:
            j += 1
        if valid[i] and j - i + 1 >= flat_min and y[i] != 0:
            flat_runs.append((i, j))
        i = j + 1
for a, b in flat_runs:
    over = [sp for sp in spans if sp[0] <= b and sp[1] >= a]
    for sp in over:
        spans.remove(sp)
    a2 = min([a] + [sp[0] for sp in over])
    b2 = max([b] + [sp[1] for sp in over])
    spans.append([a2, b2, 0, "flat"])
spans.sort(key=lambda sp: sp[0])

kept, ignored = [], []
for a, b, sgn, how in spans:
    idx = np.arange(a, b + 1)
    v = idx[valid[idx]]
    n_core = int(core[idx].sum())
    peak_i = int(v[np.argmax(absz[v])])
    peak_dev = abs(resid[peak_i])
    if how == "flat":
        kept.append((a, b, sgn, how))
        continue
    reason = None
    if n_core < 2 and absz[peak_i] < Z_SINGLE:
        reason = T["ignore_single"] % (Z_T, Z_SINGLE)
    elif peak_dev < MATERIAL * level:
        reason = T["ignore_small"] % (peak_dev, U, 100 * MATERIAL, level, U)
    if reason:
        ignored.append({"start": grid[a], "end": grid[b], "n": len(v), "peak_z": float(z[peak_i]),
                        "dev": float(resid[peak_i]), "exp": float(expected[peak_i]), "reason": reason})
    else:
        kept.append((a, b, sgn, how))

temp_show = temp if have_temp else np.full(n_grid, np.nan)
typ_temp_by_hour = pd.Series(temp_show).groupby(hour).median() if have_temp else None
exp_lo, exp_hi = np.nanpercentile(expected, 5), np.nanpercentile(expected, 95)
TU = "deg " + TUNIT
hot_margin = 4.0 if TUNIT == "C" else 7.0
DAILY = interval >= pd.Timedelta(days=1)


def temp_u(c):
    """A model temperature (deg C) in the data's unit."""
    return c * 9 / 5 + 32 if TUNIT == "F" else c


def span_text(a, b, words=None):
    """When an event happened, in the report's language: 'Monday 2024-01-08 02:00 to 05:00'."""
    W = words or T
    s, e = grid[a], grid[b]
    day = lambda x: W["days"][x.day_of_week]
    if DAILY:
        return "%s %s" % (day(s), s.strftime("%Y-%m-%d")) + (
            "" if a == b else " %s %s %s" % (W["to"], day(e), e.strftime("%Y-%m-%d")))
    if s.date() == e.date():
        return "%s %s %s %s" % (day(s), s.strftime(TIME_FMT), W["to"], e.strftime("%H:%M"))
    return "%s %s %s %s %s" % (day(s), s.strftime(TIME_FMT), W["to"], day(e), e.strftime(TIME_FMT))


def part_of_day(hs):
    names = []
    for h in hs:
        n = "night" if (h >= 22 or h < 6) else "morning" if h < 12 else "afternoon" if h < 18 else "evening"
        if n not in names:
            names.append(n)
    return "/".join(names)


def when_phrase(a, b, pod, day_type, W):
    """e.g. 'a Thursday evening/night (working day)', 'the night from Saturday to Sunday (weekend)'."""
    s, e = grid[a], grid[b]
    X = W["why"]
    kind = X["day_type"].get(day_type, "")
    day = lambda x: W["days"][x.day_of_week]
    if interval >= pd.Timedelta(days=1):
        return span_text(a, b, W) + kind
    if s.date() == e.date():
        return X["on_day"] % (day(s), "/".join(W["pod"][p] for p in pod.split("/")), kind)
    if (e.normalize() - s.normalize()).days == 1 and set(pod.split("/")) <= {"evening", "night"}:
        return X["night_from"] % (day(s), day(e), kind)
    return X["span"] % (day(s), s.strftime("%H:%M"), day(e), e.strftime("%H:%M"), kind)


def hours_text(h, words=None):
    W = words or T
    if h >= 48:
        return (W["n_days"] % (h / 24.0)).replace(".0 " + W["days_word"], " " + W["days_word"])
    return ("%.2f" % h).rstrip("0").rstrip(".") + " h"


def pct_text(p, W):
    return ("%+.0f %%" % p) if np.isfinite(p) else W["why"]["na"]


events = []
for n_ev, (a, b, sgn, how) in enumerate(kept, start=1):
    idx = np.arange(a, b + 1)
    v = idx[valid[idx]]
    peak_i = int(v[np.argmax(absz[v])])
    excess_raw = float(np.sum(resid[v]))
    sum_exp = float(np.sum(expected[v]))
    direction = "flat" if how == "flat" else ("spike" if excess_raw > 0 else "drop")
    mean_val, mean_exp = float(np.mean(y[v])), float(np.mean(expected[v]))
    mt = float(np.nanmean(temp_show[idx])) if have_temp and np.isfinite(temp_show[idx]).any() else float("nan")
    tt = float(np.nanmean(typ_temp_by_hour.reindex(hour[idx]).to_numpy())) if have_temp else float("nan")
    days = sorted(set(dow[idx]))
    day_type = "weekend" if all(d >= 5 for d in days) else "weekday" if all(d < 5 for d in days) else "weekday+weekend"
    frac = (mean_exp - exp_lo) / (exp_hi - exp_lo) if exp_hi > exp_lo else 0.5
    context = "base load" if frac < 0.25 else "operating hours" if frac > 0.6 else "partial operation"
    pod = part_of_day(hour[idx]) if interval < pd.Timedelta(days=1) else "whole day"
    dur_h = (b - a + 1) * dt_h
    pct = 100.0 * excess_raw / sum_exp if sum_exp > 0 else float("nan")
    # "well above/below typical" = beyond the usual temperature of those hours by a margin
    hot = have_temp and np.isfinite(mt) and mt > tt + hot_margin
    cold = have_temp and np.isfinite(mt) and mt < tt - hot_margin
    no_heat_expected = (temp_model is not None and (temp_model["beta"][1] > 0 or temp_model["beta"][2] > 0)
                        and np.isfinite(mt) and mt > temp_u(temp_model["hb"]))
    no_cool_expected = (temp_model is not None and (temp_model["beta"][3] > 0 or temp_model["beta"][4] > 0)
                        and np.isfinite(mt) and mt < temp_u(temp_model["cb"]))

    def explain(W):
        """A plausible cause, only from the event's times, values and temperature, in W's words."""
        X = W["why"]
        when = when_phrase(a, b, pod, day_type, W)
        pt = pct_text(pct, W)
        ctx = X["context"][context]
        tnote = X["tnote"] % (mt, TU, tt, TU) if have_temp and np.isfinite(mt) else ""
        if direction == "flat":
            expl = X["flat"] % (y[a], U, b - a + 1, hours_text(dur_h, W), when, np.min(expected[v]),
                                np.max(expected[v]), U)
        elif KIND not in ("energy", "power"):
            # not a meter of energy: no building causes, only what the numbers say
            expl = X["other"] % (X["higher"] if direction == "spike" else X["lower"], YCOL, mean_val, U, mean_exp,
                                 U, pt, when)
        elif direction == "drop" and mean_val <= 0.1 * max(mean_exp, 1e-9):
            expl = X["zero"] % (mean_val, U, hours_text(dur_h, W), when, mean_exp, U, ctx)
        elif direction == "spike" and DAILY:
            expl = X["daily_spike"] % (when, mean_val, U, mean_exp, U, X["and_temps"] if temp_model else "", pt)
            if no_heat_expected and not no_cool_expected:
                expl += X["warm_heating"] % (mt, TU, temp_u(temp_model["hb"]), TU)
            elif no_cool_expected and not no_heat_expected:
                expl += X["cool_cooling"] % (mt, TU, temp_u(temp_model["cb"]), TU)
            else:
                expl += X["days_running"]
            tnote = ""
        elif direction == "drop" and DAILY:
            expl = X["daily_drop"] % (when, mean_val, U, mean_exp, U, pt)
        elif direction == "spike" and context == "base load" and mean_val >= 0.8 * exp_hi:
            expl = X["left_on"] % (when, mean_exp, U, mean_val, U, exp_hi, U, pt)
        elif direction == "spike" and context == "base load":
            expl = X["base_spike"] % (when, mean_exp, U, mean_val, U, pt)
        elif direction == "spike" and (hot or cold) and not temp_model:
            expl = X["weather"] % (mt, TU, X["above"] if hot else X["below"], tt, TU, pt, when,
                                   X["cooling"] if hot else X["heating"], X["hot"] if hot else X["cold"])
            tnote = ""
        elif direction == "spike" and hot:
            expl = X["hot_spike"] % (mt, TU, tt, TU, pt, when)
            tnote = ""
        elif direction == "spike" and cold:
            expl = X["cold_spike"] % (mt, TU, tt, TU, pt, when)
            tnote = ""
        elif direction == "spike" and context == "partial operation":
            expl = X["shoulder"] % (pt, when)
        elif direction == "spike":
            expl = X["operating"] % (pt, when, X["ordinary_temp"] if have_temp else "")
        elif context == "base load":
            expl = X["below_base"] % (pt, when)
        else:
            expl = X["lower_use"] % (pt, when, ctx)
        if direction != "flat" and len(v) == 1:
            expl += X["single"]
        if dur_h > 24 and direction != "flat":
            expl += X["long"]
        return expl + tnote

    expl = explain(EN)  # the event table's explanation stays English
    expl_text = out(expl if LANG == "en" else explain(T))  # the report's and the answer's
    events.append({
        "event_id": n_ev, "start": grid[a].strftime(TIME_FMT), "end": grid[b].strftime(TIME_FMT),
        "duration_hours": round(dur_h, 2), "readings": int(len(v)), "missing_readings": int(len(idx) - len(v)),
        "direction": direction, "day_type": day_type, "time_of_day": pod, "context": context,
        "peak_time": grid[peak_i].strftime(TIME_FMT), "peak_value": round(float(y[peak_i]), 3),
        "expected_at_peak": round(float(expected[peak_i]), 3), "peak_z": round(float(z[peak_i]), 2),
        "mean_value": round(mean_val, 3), "mean_expected": round(mean_exp, 3),
        "excess_energy": round(excess_raw * EXCESS_FACTOR, 3), "excess_energy_unit": EXCESS_UNIT,
        "excess_pct": round(pct, 1) if np.isfinite(pct) else None, "value_unit": UNIT,
        "mean_temp": round(mt, 2) if np.isfinite(mt) else None,
        "typical_temp": round(tt, 2) if np.isfinite(tt) else None,
        "temp_unit": TU if have_temp else "",
        "when": span_text(a, b), "duration_text": hours_text(dur_h), "explanation": ascii_text(expl),
        "explanation_text": expl_text,
        "_a": a, "_b": b,
    })

# ---- 5. the event table (CSV) ------------------------------------------------------------
COLS = ["event_id", "start", "end", "duration_hours", "readings", "missing_readings", "direction",
        "day_type", "time_of_day", "context", "peak_time", "peak_value", "expected_at_peak", "peak_z",
        "mean_value", "mean_expected", "excess_energy", "excess_energy_unit", "excess_pct", "value_unit",
        "mean_temp", "typical_temp", "temp_unit", "explanation"]
table = pd.DataFrame([{c: e[c] for c in COLS} for e in events], columns=COLS)
for c in table.columns:
    if table[c].dtype == object:
        table[c] = table[c].map(lambda x: ascii_text(x) if isinstance(x, str) else x)
with open(OUT["csv"], "w", encoding="ascii", newline="") as fh:
    table.to_csv(fh, index=False, lineterminator="\n")
points_path = os.path.splitext(OUT["csv"])[0] + "_points.csv"
prow = []
for e in events:
    for i in range(e["_a"], e["_b"] + 1):
        prow.append({"event_id": e["event_id"], "time": grid[i].strftime(TIME_FMT),
                     "value": round(float(y[i]), 3) if valid[i] else None,
                     "expected": round(float(expected[i]), 3),
                     "residual": round(float(resid[i]), 3) if valid[i] else None,
                     "robust_z": round(float(z[i]), 2) if valid[i] else None,
                     "flagged": bool(core[i])})
with open(points_path, "w", encoding="ascii", newline="") as fh:
    pd.DataFrame(prow, columns=["event_id", "time", "value", "expected", "residual", "robust_z", "flagged"]).to_csv(fh, index=False, lineterminator="\n")

# ---- 6. the chart (PNG) --------------------------------------------------------------------
COL = {"spike": "#d62728", "drop": "#9467bd", "flat": "#7f7f7f"}
if KIND == "energy":
    ylab = T["ylab_energy"] % (YCOL, UNIT or T["units"], td_text(interval))
elif UNIT:
    ylab = "%s (%s)" % (YCOL, UNIT)
else:
    ylab = YCOL
fname = os.path.basename(src)
top_events = sorted(events, key=lambda e: -abs(e["excess_energy"]))[:4]
zooms = MODE == "full" and len(top_events) > 0
ncols = max(2, len(top_events))
rows = [3.2, 1.3] + ([1.1] if have_temp else []) + ([2.3] if zooms else [])
fig = plt.figure(figsize=(14, 3.0 + 2.2 * len(rows)), layout="constrained")
class ViewDateLocator(mdates.AutoDateLocator):
    """AutoDateLocator that keeps the ticks it found while the view stays the same: the
    layout asks each axis for its ticks about twenty times a draw, and these ticks
    depend on the view alone (not on the size of the axes)."""

    _memo = None

    def __call__(self):
        view = (id(self.axis), *self.axis.get_view_interval())
        if self._memo is None or self._memo[0] != view:
            self._memo = (view, super().__call__())
        return np.array(self._memo[1])


class DateWords(mdates.ConciseDateFormatter):
    """Concise dates with the month names of the report's language. Keeps the labels
    (and the offset text that goes with them) of the last ticks it was given, which the
    layout asks for again and again."""

    _memo = None

    def words(self, s):
        for en, local in zip(ANOMALY_TEXTS["en"]["months"], T["months"]):
            s = s.replace(en, local)
        return out(s)

    def format_ticks(self, values):
        axis = self._locator.axis
        key = (tuple(values), bool(axis and axis.get_inverted()))  # what the labels depend on
        if self._memo is None or self._memo[0] != key:
            labels = [self.words(s) for s in super().format_ticks(values)]
            self._memo = (key, labels, self.offset_string)
        self.offset_string = self._memo[2]
        return list(self._memo[1])

    def get_offset(self):
        return self.words(super().get_offset())


chart_title = out(plural(len(events), T["suptitle"]) % (fname, YCOL, len(events)))
fig.suptitle(chart_title, fontsize=13)
gs = fig.add_gridspec(len(rows), ncols, height_ratios=rows)
ax1 = fig.add_subplot(gs[0, :])
_plus = T["plus_temp"] if temp_model else ""
base_lab = T["base_lab"] % (slot_desc, _plus)
# Long sub-daily series: the overview shows daily means (the close-ups show the detail).
overview_daily = n_grid > 3000 and interval < pd.Timedelta(days=1)
if overview_daily:
    day_key = grid.normalize()
    ov = pd.DataFrame({"y": y, "e": np.where(valid, expected, np.nan), "t": temp}, index=grid).groupby(day_key).mean()
    ov_x, ov_y, ov_e, ov_t = ov.index, ov["y"].to_numpy(), ov["e"].to_numpy(), ov["t"].to_numpy()
    ax1.plot(ov_x, ov_y, color="#1f77b4", lw=1.0, label=out(T["measured_daily"]))
    ax1.plot(ov_x, ov_e, color="#ff7f0e", lw=1.0, alpha=0.9, label=out(T["base_lab_daily"] % (slot_desc, _plus)))
    ymax = float(np.nanmax(np.concatenate([ov_y[np.isfinite(ov_y)], ov_e[np.isfinite(ov_e)]])))
    ymin = min(0.0, float(np.nanmin(ov_y)))
    ylab = ylab + T["daily_mean"]
else:
    ax1.plot(grid, y, color="#1f77b4", lw=0.8, label=out(T["measured"]))
    ax1.plot(grid, expected, color="#ff7f0e", lw=0.9, alpha=0.85, label=out(base_lab))
    ymax = float(np.nanmax(np.concatenate([y[valid], expected[np.isfinite(expected)]])))
    ymin = min(0.0, float(np.nanmin(y[valid])))
for e in events:
    s_, en = grid[e["_a"]], grid[e["_b"]] + interval
    ax1.axvspan(s_, en, color=COL[e["direction"]], alpha=0.25, lw=0)
    ax1.text(s_ + (en - s_) / 2, ymax * 1.03, str(e["event_id"]), ha="center", va="bottom", fontsize=10,
             fontweight="bold", color=COL[e["direction"]])
from matplotlib.patches import Patch

handles, labels = ax1.get_legend_handles_labels()
for d in ("spike", "drop", "flat"):
    if any(e["direction"] == d for e in events):
        handles.append(Patch(color=COL[d], alpha=0.35))
        labels.append(out(T["legend"][d]))
ax1.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=len(handles), fontsize=8.5,
           frameon=False, borderaxespad=0.2)
ax1.set_ylim(bottom=ymin, top=ymax * 1.12)
ax1.set_ylabel(out(ylab))
ax1.grid(alpha=0.3)
ax2 = fig.add_subplot(gs[1, :], sharex=ax1)
lim = max(Z_T * 2, min(20.0, float(np.nanmax(absz)) * 1.05 if valid.any() else 10.0))
in_event = np.zeros(n_grid, dtype=bool)
for e in events:
    in_event[e["_a"]:e["_b"] + 1] = True
ax2.plot(grid, np.clip(z, -lim, lim), color="#555555", lw=0.6)
m = core & in_event
ax2.scatter(grid[m], np.clip(z[m], -lim, lim), s=10, color="#d62728", zorder=3,
            label=out(T["z_in_event"] % Z_T))
m = core & ~in_event
if m.any():
    ax2.scatter(grid[m], np.clip(z[m], -lim, lim), s=14, facecolors="none", edgecolors="#ff7f0e", zorder=3,
                label=out(T["z_ignored"] % Z_T))
for sgn in (-1, 1):
    ax2.axhline(sgn * Z_T, color="#d62728", ls="--", lw=0.8)
ax2.set_ylim(-lim * 1.05, lim * 1.05)
ax2.set_ylabel(out(T["robust_z"]))
ax2.set_title(out(T["z_title"] % (Z_T, lim)), fontsize=10)
ax2.legend(loc="upper left", fontsize=8, ncol=2)
ax2.grid(alpha=0.3)
row = 2
if have_temp:
    ax3 = fig.add_subplot(gs[row, :], sharex=ax1)
    ax3.plot(ov_x if overview_daily else grid, ov_t if overview_daily else temp, color="#2ca02c", lw=0.8)
    ax3.set_ylabel(out(T["outdoor_axis"] % TU))
    ax3.set_title(out(T["outdoor_title"] % (TEMPCOL, T["daily_mean"] if overview_daily else "")), fontsize=10)
    ax3.grid(alpha=0.3)
    row += 1
for ax in fig.axes:
    loc = ViewDateLocator()
    ax.xaxis.set_major_locator(loc)
    ax.xaxis.set_major_formatter(DateWords(loc))
if zooms:
    for j, e in enumerate(sorted(top_events, key=lambda e: e["_a"])):
        ax = fig.add_subplot(gs[row, j])
        pad = max(int(round(pd.Timedelta(hours=12) / interval)), e["_b"] - e["_a"] + 1)
        pad = min(pad, max(1, int(round(pd.Timedelta(days=2) / interval))))
        lo_i, hi_i = max(0, e["_a"] - pad), min(n_grid - 1, e["_b"] + pad)
        sl = slice(lo_i, hi_i + 1)
        ax.plot(grid[sl], y[sl], color="#1f77b4", lw=1.0)
        ax.plot(grid[sl], expected[sl], color="#ff7f0e", lw=1.0)
        ax.axvspan(grid[e["_a"]], grid[e["_b"]] + interval, color=COL[e["direction"]], alpha=0.25, lw=0)
        _day = grid[e["_a"]]
        ax.set_title(out(T["closeup"] % (e["event_id"], T["dir"][e["direction"]],
                                         T["days_short"][_day.day_of_week] + _day.strftime(" %Y-%m-%d"))), fontsize=9)
        loc = ViewDateLocator(maxticks=5)
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_major_formatter(DateWords(loc))
        ax.tick_params(labelsize=7.5)
        ax.grid(alpha=0.3)
        if j == 0:
            ax.set_ylabel(out(UNIT or YCOL), fontsize=8)
# The chart's words also go into the PNG's text fields (Title, Description), for
# search and screen readers, and so that its language can be checked.
chart_words = []
for ax in fig.axes:
    legend = ax.get_legend()
    chart_words += [ax.get_title(), ax.get_ylabel()] + ([x.get_text() for x in legend.get_texts()] if legend else [])
for ax in fig.axes:
    for axis in (ax.xaxis, ax.yaxis):
        # No minor ticks, so none to drop where they overlap the major ones (matplotlib
        # would ask the locator for the major ticks once more on every call to find out).
        if isinstance(axis.get_minor_locator(), mticker.NullLocator):
            axis.remove_overlapping_locs = False
# zlib level 1: the same pixels, written in about half the time, for a file ~10 % larger
fig.savefig(OUT["png"], dpi=120, pil_kwargs={"compress_level": 1},
            metadata={"Title": chart_title, "Description": " | ".join(w for w in chart_words if w)})
plt.close(fig)

# ---- 7. the report (Markdown; plain ASCII in English or when asked) -----------------------
def f3(x):
    return "-" if x is None or (isinstance(x, float) and not np.isfinite(x)) else ("%.4g" % x)


def pct_cell(p, drop=False):
    """A percentage of the expected: signed, or a drop's shortfall as its size."""
    if p is None:
        return "-"
    return ("%.0f" % -p) if drop else ("%+.0f" % p)


def pod_text(pod):
    return "/".join(T["pod"].get(p, p) for p in pod.split("/"))


span_days = (grid[-1] - grid[0] + interval) / pd.Timedelta(days=1)
L = []
L.append(T["title_energy"] % fname if KIND in ("energy", "power") else T["title"] % (YCOL, fname))
L.append("")
L.append(T["intro"] % (YCOL, T["and_temp"] if have_temp else ""))
L.append("")
L.append(T["h_summary"])
L.append("")
if events:
    L.append(plural(len(events), T["n_found"]) % (len(events), int(valid.sum()), INTERVAL_WORD, YCOL))
    L.append("")
    for e in events:
        drop = e["direction"] == "drop"  # said as its lowest reading and its shortfall
        L.append(T["summary_line_drop" if drop else "summary_line"] % (
            e["event_id"], e["when"], hours_text(e["duration_hours"]), T["dir"][e["direction"]], f3(e["peak_value"]), U,
            f3(e["expected_at_peak"]), U, e["peak_z"], -e["excess_energy"] if drop else e["excess_energy"],
            EXCESS_UNIT_TEXT, pct_cell(e["excess_pct"], drop)))
else:
    L.append(T["none_found"])
L.append("")
# The chart, linked relative to the report so that it shows wherever the folder goes.
L.append("![%s](%s)" % (T["chart_alt"] % YCOL,
                        os.path.relpath(OUT["png"], os.path.dirname(OUT["md"]) or ".").replace(os.sep, "/")))
L.append("")
L.append(T["h_data"])
L.append("")
L.append(T["d_file"] % (src, (T["d_sheet"] % sheet) if sheet else "", raw_rows))
L.append(T["d_columns"] % (TCOL, YCOL, (" (%s)" % UNIT) if UNIT else "",
                           (T["d_temp"] % (TEMPCOL, TU)) if have_temp else T["d_no_temp"]))
L.append(T["d_span"] % (grid[0].strftime(TIME_FMT), grid[-1].strftime(TIME_FMT), span_days, td_text(interval)))
L.append(T["d_grid"] % (n_grid, int(valid.sum()), n_missing, n_missing_rows, n_missing - n_missing_rows))
if valid.any():
    L.append(T["d_range"] % (YCOL, np.nanmedian(y), U, np.nanpercentile(y, 5), np.nanpercentile(y, 95), U,
                             np.nanmin(y), np.nanmax(y)))
if have_temp:
    L.append(T["d_temp_range"] % (np.nanmin(temp), np.nanmax(temp), TU, np.nanmedian(temp), TU))
for n_ in notes:
    L.append("- " + n_)
L.append("")
L.append(T["h_method"])
L.append("")
L.append(T["m_baseline"] % (slot_desc, samples_per_slot))
if temp_model:
    L.append(T["m_temp"] % (op_text, found))
elif MODE != "full":
    L.append(T["m_no_temp_simple"])
else:
    L.append(T["m_no_temp"])
L.append(T["m_z"] % (glob_scale, U))
L.append(T["m_threshold"] % Z_T)
L.append(plural(max_gap, T["m_events"]) % (max_gap, Z_EXT, flat_min))
L.append(T["m_noise"] % (Z_SINGLE, 100 * MATERIAL, level, U))
L.append(T["m_size"] % (T["energy_word"] if KIND in ("energy", "power") else "",
                        T["x_interval"] % td_text(interval) if KIND == "power" else ""))
L.append("")
L.append(T["h_events"])
L.append("")
if events:
    L.append(T["table_head"] % (UNIT or T["value"], UNIT or T["value"], EXCESS_UNIT_TEXT, TU if have_temp else "-"))
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for e in events:
        L.append("| %d | %s | %s | %s | %s | %s %s | %s | %s | %+.1f | %+.4g | %s | %s |" % (
            e["event_id"], e["start"], e["end"], f3(e["duration_hours"]), T["dir"][e["direction"]],
            T["day_type"].get(e["day_type"], e["day_type"]), pod_text(e["time_of_day"]), f3(e["peak_value"]),
            f3(e["expected_at_peak"]), e["peak_z"], e["excess_energy"], pct_cell(e["excess_pct"]),
            ("%.1f" % e["mean_temp"]) if e["mean_temp"] is not None else "-"))
    L.append("")
    L.append(T["start_end"] % td_text(interval))
    L.append("")
    for e in events:
        L.append(T["e_head"] % (e["event_id"], T["dir"][e["direction"]], e["when"]))
        L.append("")
        drop = e["direction"] == "drop"
        L.append(T["e_duration_drop" if drop else "e_duration"] % (
            hours_text(e["duration_hours"]), e["readings"], (T["e_missing"] % e["missing_readings"]) if e["missing_readings"] else "",
            e["peak_time"], f3(e["peak_value"]), U, f3(e["expected_at_peak"]), U, e["peak_z"]))
        L.append(T["e_mean_drop" if drop else "e_mean"] % (
            f3(e["mean_value"]), U, f3(e["mean_expected"]), U, -e["excess_energy"] if drop else e["excess_energy"],
            EXCESS_UNIT_TEXT, pct_cell(e["excess_pct"], drop)))
        L.append(T["e_why"] % e["explanation_text"])
        L.append("")
else:
    L.append(T["none"])
    L.append("")
L.append(T["h_normal"])
L.append("")
if ignored:
    L.append(plural(len(ignored), T["n_ignored"]) % len(ignored))
    L.append("")
    for g in ignored[:15]:
        L.append(T["ignored_line"] % (g["start"].strftime(TIME_FMT), g["n"], "" if g["n"] == 1 else "s", g["peak_z"],
                                      g["dev"], U, g["exp"], U, g["reason"]))
    if len(ignored) > 15:
        L.append(T["and_more"] % (len(ignored) - 15))
else:
    L.append(T["no_other"])
if temp_model:
    explained = valid & (np.abs(np.nan_to_num(z0)) >= Z_T) & (absz < Z_T)
    if explained.any():
        dd = sorted(set(grid[explained].strftime("%Y-%m-%d")))
        L.append("")
        L.append(plural(int(explained.sum()), T["explained"]) % (
            int(explained.sum()), ", ".join(dd[:8]), ", ..." if len(dd) > 8 else ""))
L.append("")
L.append(T["h_files"])
L.append("")
L.append(T["f_csv"] % (OUT["csv"], ", ".join(COLS)))
L.append(T["f_points"] % points_path)
L.append(T["f_png"] % (OUT["png"], T["f_png_temp"] if have_temp else "", T["f_png_zooms"] if zooms else ""))
L.append(T["f_md"] % OUT["md"])
L.append("")
L.append(T["h_limits"])
L.append("")
L.append(T["l_causes"] % (T["and_temp"] if have_temp else ""))
L.append(T["l_baseline"] % span_days)
L.append(T["l_holidays"])
if temp_model:
    L.append(T["l_temp"])
L.append(T["l_dst"])
L.append(T["l_thresholds"] % (Z_T, Z_SINGLE, 100 * MATERIAL))
if MODE != "full":
    L.append(T["l_simple"])
report = out("\n".join(L) + "\n")
with open(OUT["md"], "w", encoding="ascii" if PLAIN else "utf-8", newline="\n") as fh:
    fh.write(report)

# ---- 8. summary for the planner ------------------------------------------------------------
print("Loaded %s: %d rows -> %d intervals of %s from %s to %s (%d missing)." % (
    ascii_text(src), raw_rows, n_grid, fmt_td(interval), grid[0].strftime(TIME_FMT), grid[-1].strftime(TIME_FMT), n_missing))
for n_ in notes:
    print("Note: " + ascii_text(n_))
if temp_model:
    print("Baseline: %s median + temperature model (%s); typical spread %.3g%s."
          % (slot_desc, found, glob_scale, U))
else:
    print("Baseline: %s median%s; typical spread %.3g%s." % (slot_desc, "" if MODE == "full" else " (simplified fallback)", glob_scale, U))
print("Flagged %d readings with |z| >= %.1f; %d event%s kept, %d candidate group%s ignored as noise." % (
    int(core.sum()), Z_T, len(events), "" if len(events) == 1 else "s", len(ignored), "" if len(ignored) == 1 else "s"))
for e in events:
    print(ascii_text("Event %d: %s (%s) %s, peak %s%s vs %s%s expected, z %+.1f, excess %+.4g %s" % (
        e["event_id"], e["when"], hours_text(e["duration_hours"]), e["direction"], f3(e["peak_value"]), U,
        f3(e["expected_at_peak"]), U, e["peak_z"], e["excess_energy"], EXCESS_UNIT)))
print("Saved %s, %s, %s (and %s)." % (OUT["csv"], OUT["png"], OUT["md"], points_path))
def short_cause(text):
    """The likely cause: what follows '->' up to the end of that sentence."""
    part = text.split("->", 1)[-1].strip()
    cut = part.find(". ")
    part = part[: cut + 1] if cut >= 0 else part
    return part.rstrip(".")[:200]


result = {
    "mode": MODE, "input": src, "measure": YCOL, "unit": UNIT, "excess_unit": EXCESS_UNIT_TEXT, "kind": KIND,
    "rows": raw_rows, "intervals": n_grid, "interval": td_text(interval), "interval_word": INTERVAL_WORD,
    "cadence": CADENCE, "missing": n_missing, "lang": LANG,
    "start": grid[0].strftime(TIME_FMT), "end": grid[-1].strftime(TIME_FMT),
    "temperature": TEMPCOL if have_temp else None, "baseline": base_lab,
    "baseline_method": T["base_method"] % (slot_desc, _plus), "threshold": Z_T,
    "n_events": len(events), "ignored": len(ignored), "outputs": OUT, "points_csv": points_path,
    "columns": COLS,
    "events": [dict({k: e[k] for k in ("event_id", "start", "end", "when", "duration_hours", "duration_text", "direction",
                                       "peak_value", "expected_at_peak", "peak_z", "excess_energy", "excess_pct",
                                       "mean_temp")}, cause=short_cause(e["explanation_text"]),
                     direction_text=T["dir"][e["direction"]]) for e in events[:20]],
}
print("SANDALYST_RESULT " + json.dumps(result, separators=(",", ":")))
# The check step reads what this analysis found from here, so that a replay of the
# recorded cells on new data checks the new findings, not the ones written into the
# check's code when it was first planned.
try:
    import os

    os.makedirs(".sandalyst", exist_ok=True)
    with open(".sandalyst/offline_result.json", "w") as f:
        json.dump({"event_starts": [e["start"] for e in result["events"]], "n_events": len(events)}, f)
except OSError:
    pass
