def find_anomalies(data, time, value, context=(), threshold=3.5):
    """Abnormal readings of `value` over `time`, grouped into events.

    Expected value: the median by hour of week (by day of week for daily data, one
    median for coarser data), times, for each numeric context column (a driver such as
    outdoor temperature), the median ratio of value to that level in each decile of
    the driver, interpolated between deciles and extended in a line past the ends
    (where the level is not positive: a difference instead of a ratio); the two are
    fitted in turn, three rounds. Residual = value - expected; robust z = (residual -
    median) / (1.4826 * MAD), with the MAD of the hour of day where it is wider (a
    schedule that varies is not an event). A reading is flagged at |z| >= threshold; consecutive
    flagged readings on the same side make one event; an event whose largest deviation
    is under 10 % of the expected value there, or a lone reading under |z| 6, is
    normal noise and left out.
    Prints the method, its numbers and the events; returns (scored, events): every
    reading with expected, residual, z, anomaly and event, and one row per event; a
    DataFrame passed in with the time as a column gets the same columns.
    """
    import numpy as np
    import pandas as pd

    frame = data.to_frame() if isinstance(data, pd.Series) else pd.DataFrame(data)
    if time not in frame.columns:  # the time as the index
        frame = frame.reset_index()
    context = [context] if isinstance(context, str) else list(context or [])
    missing = [c for c in [time, value, *context] if c not in frame.columns]
    if missing:
        raise KeyError("no column %s; the columns are %s" % (", ".join(map(repr, missing)), list(frame.columns)))
    scored = frame.copy()
    scored[time] = pd.to_datetime(scored[time], errors="coerce")
    scored = scored.dropna(subset=[time]).sort_values(time)
    labels = scored.index  # the rows of `data` they came from
    scored = scored.reset_index(drop=True)
    t = scored[time]
    y = pd.to_numeric(scored[value], errors="coerce")
    if y.notna().sum() < 10:
        raise ValueError("%r holds %d numbers: too few for a baseline" % (value, y.notna().sum()))
    step = t.diff().median()
    if pd.isna(step) or step <= pd.Timedelta(0):
        step = pd.Timedelta(hours=1)
    if step < pd.Timedelta(days=1):
        slot, slot_name = t.dt.dayofweek * 24 + t.dt.hour, "hour of week"
        if y.notna().sum() < 3 * slot.nunique():  # under three weeks: each hour of the day
            slot, slot_name = t.dt.hour, "hour of day"
    elif step < pd.Timedelta(days=7):
        slot, slot_name = t.dt.dayofweek, "day of week"
    else:
        slot, slot_name = pd.Series(0, index=scored.index), "the whole series"
    drivers, unused = {}, []
    for c in context:
        x = pd.to_numeric(scored[c], errors="coerce")
        if c in (time, value) or x.notna().sum() < 20 or x.nunique() < 5:
            unused.append(c)
        else:
            drivers[c] = x
    one = pd.Series(1.0, index=scored.index)
    ratio = bool((y.dropna() > 0).all())  # a driver scales a positive level; else it adds

    def curve(x, target):
        """The median of `target` in each decile of `x`, interpolated, in a line past the ends."""
        bins = pd.qcut(x, 10, duplicates="drop")
        centres = x.groupby(bins, observed=True).median()
        levels = target.groupby(bins, observed=True).median()
        ok = centres.notna() & levels.notna()
        cx, cy = centres[ok].to_numpy(), levels[ok].to_numpy()
        if len(cx) < 2:
            return None
        v = x.fillna(x.median()).to_numpy()
        out = np.interp(v, cx, cy)
        low, high = v < cx[0], v > cx[-1]
        out[low] = cy[0] + (v[low] - cx[0]) * (cy[1] - cy[0]) / (cx[1] - cx[0])
        out[high] = cy[-1] + (v[high] - cx[-1]) * (cy[-1] - cy[-2]) / (cx[-1] - cx[-2])
        return pd.Series(out, index=x.index)

    effects = {c: (one if ratio else one * 0) for c in drivers}

    def combined(skip=None):
        parts = [e for k, e in effects.items() if k != skip]
        if ratio:
            return np.prod(parts, axis=0) if parts else one
        return sum(parts, one * 0)

    for _ in range(3):
        base = ((y / combined()) if ratio else (y - combined())).groupby(slot).transform("median")
        for c, x in drivers.items():
            if ratio:
                fitted = curve(x, y / (base * combined(c)))
            else:
                fitted = curve(x, y - base - combined(c))
            if fitted is not None:
                effects[c] = fitted.clip(lower=0) if ratio else fitted
    expected = base * combined() if ratio else base + combined()
    residual = y - expected
    middle = residual.median()
    mad = (residual - middle).abs().median()
    scale = 1.4826 * mad
    if not scale > 0:  # over half the residuals equal: the mean deviation instead
        scale = 1.2533 * (residual - middle).abs().mean()
    scale = scale if scale > 0 else np.nan
    # Hours of the day whose readings vary more (a building starting up or shutting
    # down) get their own, wider scale.
    if step < pd.Timedelta(days=1):
        hour_spread = (residual - middle).abs().groupby(t.dt.hour).transform("median") * 1.4826
        scale = np.maximum(hour_spread, scale) if scale > 0 else hour_spread
    z = (residual - middle) / scale
    z = z.where(np.isfinite(z), 0.0)
    scored["expected"] = expected
    scored["residual"] = residual
    scored["z"] = z

    # Flagged readings; the anomalies are those of the events kept (below).
    flagged = z.abs().ge(threshold).fillna(False)
    side = np.where(z > 0, "above expected", "below expected")
    begins = flagged & (~flagged.shift(fill_value=False) | (t.diff() > step * 1.5) | (pd.Series(side) != pd.Series(side).shift()))
    group = begins.cumsum().where(flagged)
    typical = y.abs().median()
    fmt = "%Y-%m-%d %H:%M"
    days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    typical_context = {c: x.groupby(slot).transform("median") for c, x in drivers.items()}
    rows, noise, kept = [], 0, {}
    for g, part in scored[flagged].groupby(group[flagged]):
        peak = part["z"].abs().idxmax()
        size = max(abs(expected[peak]), 0.05 * typical)
        if abs(residual[peak]) < 0.10 * size or (len(part) == 1 and abs(z[peak]) < 6):
            noise += 1
            continue
        at = t[peak]
        hour = at.hour
        part_of_day = "night" if hour < 6 or hour >= 22 else "morning" if hour < 12 else "afternoon" if hour < 18 else "evening"
        row = {
            "start": part[time].iloc[0].strftime(fmt),
            "end": part[time].iloc[-1].strftime(fmt),
            "duration_hours": round((part[time].iloc[-1] - part[time].iloc[0] + step) / pd.Timedelta(hours=1), 2),
            "readings": len(part),
            "direction": side[peak],
            "peak_time": at.strftime(fmt),
            "peak_" + value: round(float(y[peak]), 3),
            "expected_at_peak": round(float(expected[peak]), 3),
            "peak_z": round(float(z[peak]), 2),
            "deviation_" + value: round(float(residual[part.index].sum()), 3),
        }
        for c in drivers:
            row[c + "_mean"] = round(float(drivers[c][part.index].mean()), 2)
            row[c + "_typical"] = round(float(typical_context[c][peak]), 2)
        row["when"] = "%s %s, %s, %s" % (days[at.dayofweek], at.strftime("%H:%M"), part_of_day, "weekend" if at.dayofweek >= 5 else "weekday")
        rows.append(row)
        kept[g] = len(rows)
    events = pd.DataFrame(rows)
    events.insert(0, "event", range(1, len(events) + 1))
    # Only the readings of the events kept are anomalies; the event each belongs to.
    scored["event"] = group.map(kept)
    scored["anomaly"] = scored["event"].notna()

    # The same columns on the frame passed in, so a chart of it can draw them too.
    added = ["expected", "residual", "z", "anomaly", "event"]
    in_place = isinstance(data, pd.DataFrame) and time in data.columns and data.index.is_unique
    if in_place:
        for c in added:
            data[c] = pd.Series(scored[c].to_numpy(), index=labels).reindex(data.index)
        data["anomaly"] = data["anomaly"].fillna(False).astype(bool)
    hours = step / pd.Timedelta(hours=1)
    every = "%g hour%s" % (hours, "" if hours == 1 else "s") if hours >= 1 else "%g minutes" % (hours * 60)
    adjusted = " times the effect of %s (the median %s in each decile of it, interpolated)" % (", ".join(drivers), "ratio" if ratio else "difference") if drivers else ""
    print("Data: %d readings, one every %s, from %s to %s; typical %s %.4g." % (len(scored), every, t.iloc[0].strftime(fmt), t.iloc[-1].strftime(fmt), value, typical))
    print("Method: the expected %s is its median by %s%s. Residual = %s - expected. Robust z = (residual - median residual) / (1.4826 * MAD of the residuals; MAD = %.4g%s). Readings with |z| >= %g are flagged; consecutive flagged readings on the same side form an event; an event whose peak is under 10 %% of the expected value, or a lone reading under |z| 6, is normal noise." % (value, slot_name, adjusted, value, mad, ", or the hour of day's own MAD where wider" if step < pd.Timedelta(days=1) else "", threshold))
    if unused:
        print("Not used as context (not numeric, too few values, or the time or value column): %s." % ", ".join(unused))
    print("Result: %d readings flagged, %d events kept, %d left out as normal noise." % (int(flagged.sum()), len(events), noise))
    largest = events["deviation_" + value].abs().sort_values(ascending=False).index[:10]
    for _, e in events.loc[sorted(largest)].iterrows():
        total = e["deviation_" + value]
        said = "Event %d: %s to %s (%g hour%s; peak %s): %s %s, %g at the peak against %g expected (z %g), %g %s than expected in all" % (
            e["event"], e["start"], e["end"], e["duration_hours"], "" if e["duration_hours"] == 1 else "s", e["when"], value, e["direction"], e["peak_" + value],
            e["expected_at_peak"], e["peak_z"], abs(total), "more" if total > 0 else "less")
        for c in drivers:
            said += "; %s %g (typical %g at that time)" % (c, e[c + "_mean"], e[c + "_typical"])
        print(said + ".")
    if len(events) > 10:
        print("(%d smaller events in anomalies)" % (len(events) - 10))
    print("Defined: anomalies (one row per event: %s) and scored (every reading, with expected, residual, z, anomaly and event)%s." % (", ".join(events.columns), "; the same columns were added to the frame passed in" if in_place else ""))
    print("To draw them: data scored, x %r, y [%r, 'expected'], mark scored[scored.anomaly]." % (time, value))
    return scored, events
