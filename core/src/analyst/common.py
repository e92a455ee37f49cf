# --- shared helpers (Sandalyst offline analyst) -------------------------------------
import json
import os
import re
import warnings

warnings.filterwarnings("ignore")

import numpy as np
import pandas as pd

# The words the scripts read (core/src/analyst/lexicon.toml, `[scripts]`).
LEXICON = json.loads(__SANDALYST_LEXICON__)

TABULAR_EXT = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "text", ".dat": "text",
    ".xlsx": "excel", ".xlsm": "excel", ".xls": "excel",
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".parquet": "parquet", ".pq": "parquet",
}

ASCII_MAP = {
    "\u00b0": " deg ", "\u2103": "deg C", "\u2109": "deg F", "\u00b5": "u", "\u03bc": "u",
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201c": '"', "\u201d": '"',
    "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u2026": "...", "\u00a0": " ",
    "\u00b2": "2", "\u00b3": "3", "\u00d7": "x", "\u2264": "<=", "\u2265": ">=",
    "\u00b1": "+/-", "\u2192": "->", "\u00df": "ss", "\u00e6": "ae", "\u00c6": "AE", "\u00f8": "o",
    "\u00d8": "O", "\u0153": "oe", "\u0152": "OE", "\u00a0": " ", "\u20ac": "EUR", "\u00a3": "GBP",
}


def ascii_text(s):
    """Plain ASCII: known symbols spelled out, accents dropped, anything else '?'."""
    import unicodedata

    s = re.sub("\\s*\u00b0\\s*([CcFf])\\b", lambda m: " deg " + m.group(1).upper(), str(s))
    for k, v in ASCII_MAP.items():
        s = s.replace(k, v)
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    s = re.sub(r"\(\s+", "(", re.sub(r"(?<=\S)  +(?=\S)", " ", s)).strip(" ") if s.strip() else s
    # large numbers printed by %g in plain digits (1.165e+04 -> 11650)
    s = re.sub(r"(?<![\w.])([-+]?\d+(?:\.\d+)?)e\+(\d+)\b", lambda m: ("+" if m.group(0)[0] == "+" else "") + "%.0f" % float(m.group(0)), s)
    return s.encode("ascii", "replace").decode("ascii")


def optional_module(name):
    try:
        __import__(name)
        return True
    except Exception:
        return False


def sniff_sep(path):
    import csv
    with open(path, "rb") as f:
        head = f.read(65536)
    text = None
    for enc in ("utf-8-sig", "latin-1"):
        try:
            text = head.decode(enc)
            break
        except Exception:
            pass
    lines = [l for l in (text or "").splitlines() if l.strip()][:50]
    if not lines:
        return ","
    try:
        return csv.Sniffer().sniff("\n".join(lines), delimiters=",;\t|").delimiter
    except Exception:
        counts = {d: lines[0].count(d) for d in [",", ";", "\t", "|"]}
        best = max(counts, key=counts.get)
        return best if counts[best] > 0 else ","


def read_delimited(path, sep):
    # Decimal comma (e.g. "12,5" in a semicolon-separated file)?
    decimal = "."
    if sep != ",":
        with open(path, "rb") as f:
            head = f.read(65536).decode("latin-1")
        cells = [c.strip().strip('"') for line in head.splitlines()[1:200] for c in line.split(sep)]
        comma = sum(1 for c in cells if re.fullmatch(r"-?\d+,\d+", c))
        dot = sum(1 for c in cells if re.fullmatch(r"-?\d+\.\d+", c))
        if comma > dot:
            decimal = ","
    last = None
    for enc in ("utf-8-sig", "latin-1"):
        try:
            df = pd.read_csv(path, sep=sep, encoding=enc, low_memory=False, decimal=decimal)
        except UnicodeDecodeError as e:
            last = e
            continue
        # How it was read, so the same read can be written as a cell (an LLM's first).
        df.attrs["read"] = {"sep": sep, "encoding": enc, "decimal": decimal}
        return df
    raise last


def read_tables(path, kind):
    """Return a list of (label, DataFrame) for one file (Excel: one per sheet)."""
    if kind in ("csv", "tsv", "text"):
        sep = "\t" if kind == "tsv" else sniff_sep(path)
        return [(None, read_delimited(path, sep))]
    if kind == "excel":
        sheets = pd.read_excel(path, sheet_name=None)
        return [(str(k), v) for k, v in sheets.items()]
    if kind == "jsonl":
        return [(None, pd.read_json(path, lines=True))]
    if kind == "json":
        try:
            df = pd.read_json(path)
            if isinstance(df, pd.DataFrame) and df.shape[1] > 0:
                return [(None, df)]
        except Exception:
            pass
        with open(path, "rb") as f:
            obj = json.loads(f.read().decode("utf-8-sig"))
        if isinstance(obj, dict):
            lists = [v for v in obj.values() if isinstance(v, list)]
            if lists:
                obj = max(lists, key=len)
        return [(None, pd.json_normalize(obj))]
    if kind == "parquet":
        return [(None, pd.read_parquet(path))]
    raise ValueError("not a tabular file kind: %s" % kind)


TIME_HINTS = tuple(LEXICON["time_hints"])


def tokens(name):
    return [t for t in re.split(r"[^a-z0-9]+", str(name).lower()) if t]


TIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M",
                "%Y/%m/%d %H:%M:%S", "%Y/%m/%d %H:%M", "%m/%d/%Y %H:%M", "%m/%d/%Y %H:%M:%S",
                "%m/%d/%Y %I:%M %p", "%m/%d/%Y %I:%M:%S %p", "%d/%m/%Y %H:%M", "%d/%m/%Y %H:%M:%S",
                "%d.%m.%Y %H:%M", "%d.%m.%Y %H:%M:%S", "%d-%m-%Y %H:%M", "%d-%m-%Y %H:%M:%S",
                "%Y-%m-%d", "%m/%d/%Y", "%d/%m/%Y", "%d.%m.%Y", "%Y%m%d%H%M", "%Y%m%d %H:%M")


def parse_times(series, unit=None):
    """Parse a column as datetimes (naive local wall time). Returns a datetime Series.

    Text is tried against common explicit formats first (fast and identical on pandas
    1.5 and 2.x; month-first before day-first, as pandas does), then pandas' own parser.
    """
    s = series
    if unit:
        out = pd.to_datetime(pd.to_numeric(s, errors="coerce"), unit=unit, errors="coerce")
    elif pd.api.types.is_datetime64_any_dtype(s):
        out = s
    else:
        txt = s.astype(str).str.strip()
        valid = s.notna() & (txt != "")
        nonnull = txt[valid]
        out = None
        if len(nonnull):
            sample = nonnull.iloc[:: max(1, len(nonnull) // 300)]
            best, best_frac = None, 0.0
            for fmt in TIME_FORMATS:
                frac = float(pd.to_datetime(sample, format=fmt, errors="coerce").notna().mean())
                if frac > best_frac + 1e-9:
                    best, best_frac = fmt, frac
                if frac >= 1.0:
                    break
            if best is not None and best_frac >= 0.99:
                cand = pd.to_datetime(txt.where(valid), format=best, errors="coerce")
                if cand.notna().sum() >= 0.98 * valid.sum():
                    out = cand
        if out is None:
            try:
                out = pd.to_datetime(txt.where(valid), errors="coerce")
            except Exception:
                out = pd.Series(pd.NaT, index=s.index)
            if not pd.api.types.is_datetime64_any_dtype(out) or out.notna().mean() < 0.9:
                # Mixed formats or mixed UTC offsets: parse as UTC.
                try:
                    alt = pd.to_datetime(txt.where(valid), errors="coerce", utc=True)
                    have = out.notna().sum() if pd.api.types.is_datetime64_any_dtype(out) else 0
                    if pd.api.types.is_datetime64_any_dtype(alt) and alt.notna().sum() > have:
                        out = alt
                except Exception:
                    pass
        if not pd.api.types.is_datetime64_any_dtype(out):
            out = pd.Series(pd.NaT, index=s.index)
    if getattr(out.dt, "tz", None) is not None:
        out = out.dt.tz_localize(None)
    return out.astype("datetime64[ns]")


def text_dates(series):
    """Whether a text column holds dates ("2023-07-29", "29/07/2023", "Jul 29 2023"):
    nearly every value has digits and a date separator and parses as a date."""
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return False
    txt = series.dropna().astype(str).str.strip()
    txt = txt[txt != ""]
    if len(txt) == 0:
        return False
    sample = txt.iloc[:: max(1, len(txt) // 300)]
    looks = sample.str.contains(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|[A-Za-z]{3,9}\.? \d{1,2},? \d{4}", regex=True)
    if looks.mean() < 0.95:
        return False
    return bool(parse_times(sample).notna().mean() >= 0.95)


def time_candidate(name, series):
    """Score a column as the time axis; None if it does not parse as datetimes."""
    toks = tokens(name)
    hint = any(h in toks for h in TIME_HINTS) or any(
        h in str(name).lower() for h in LEXICON["time_name_parts"])
    nonnull = series.dropna()
    if len(nonnull) == 0:
        return None
    sample = nonnull.iloc[:: max(1, len(nonnull) // 400)]
    unit = None
    if pd.api.types.is_datetime64_any_dtype(series):
        frac = 1.0
    elif pd.api.types.is_bool_dtype(series):
        return None
    elif pd.api.types.is_numeric_dtype(series):
        if not hint:
            return None
        med = float(pd.to_numeric(sample, errors="coerce").median())
        if 3e8 < med < 5e9:
            unit = "s"
        elif 3e11 < med < 5e12:
            unit = "ms"
        else:
            return None
        frac = 1.0
    else:
        txt = sample.astype(str)
        if txt.str.fullmatch(r"\s*-?\d+(\.\d+)?\s*").mean() > 0.5:
            return None  # plain numbers in a text column
        parsed_txt = parse_times(sample)
        frac = float(parsed_txt.notna().mean())
        if frac < 0.8:
            return None
        # Times of day or codes with no date in them parse onto today's date: that is
        # no time axis, and an anomaly analysis on it would be made up.
        days = parsed_txt.dropna().dt.normalize()
        if len(days) and (days == pd.Timestamp.now().normalize()).all():
            return None
    parsed = parse_times(sample, unit)
    uniq = parsed.nunique() / max(1, parsed.notna().sum())
    score = frac + (1.0 if hint else 0.0) + 0.5 * uniq
    return {"name": str(name), "score": round(score, 3), "unit": unit, "parsed_fraction": round(frac, 3)}


MEASURE_STRONG = tuple(LEXICON["measure_strong"])
MEASURE_WEAK = tuple(LEXICON["measure_weak"])
ID_HINTS = tuple(LEXICON["id_hints"])


def is_temperature(name):
    n = str(name).lower()
    toks = tokens(name)
    if any(h in n for h in LEXICON["temperature_name_parts"]):
        return True
    if any(t in LEXICON["temperature_words"] for t in toks):
        return True
    if toks and toks[-1] in ("c", "f") and len(toks) > 1 and not any(
            t in MEASURE_STRONG for t in toks):
        return True
    return False


def temperature_unit(name, series):
    n = str(name).lower()
    toks = tokens(name)
    if "fahrenheit" in n or "degf" in n or "\u00b0f" in n or "\u2109" in n or (toks and toks[-1] == "f"):
        return "F", "column name"
    if "celsius" in n or "degc" in n or "\u00b0c" in n or "\u2103" in n or (toks and toks[-1] == "c"):
        return "C", "column name"
    v = pd.to_numeric(series, errors="coerce").dropna()
    if len(v) and (float(v.median()) > 35.0 or float(v.quantile(0.99)) > 50.0):
        return "F", "value range"
    return "C", "value range"


def measure_unit(name):
    """(unit, kind) from a column name: kind is energy (per interval), power or other."""
    toks = tokens(name)
    n = str(name).lower()
    for tok, unit, kind in LEXICON["measure_units"]:
        if tok in toks:
            return unit, kind
    if "kwh" in n:
        return "kWh", "energy"
    if any(t in toks for t in LEXICON["energy_words"]):
        return "", "energy"
    if any(t in toks for t in LEXICON["power_words"]):
        return "", "power"
    return "", "other"


def is_id_like(name, series):
    toks = tokens(name)
    if any(t in ID_HINTS for t in toks) and not any(t in MEASURE_STRONG for t in toks):
        return True
    v = pd.to_numeric(series, errors="coerce").dropna()
    if len(v) > 10 and (v == v.round()).all() and v.is_monotonic_increasing and v.nunique() == len(v):
        return True  # a row counter
    return False


def is_identifier(name, series):
    """An identifier, never a measure: `id`, `student_id`, `PassengerId`, `uuid`, or a
    row counter (unlike is_id_like, a year or a name column is not one)."""
    low = str(name).lower()
    if any(t in LEXICON["identifier_words"] for t in tokens(name)) or (len(low) > 3 and low.endswith("id") and str(name)[-2:] in ("Id", "ID")):
        return True
    v = pd.to_numeric(series, errors="coerce").dropna()
    return bool(len(v) > 10 and (v == v.round()).all() and v.is_monotonic_increasing and v.nunique() == len(v))


def numeric_view(series):
    """Numeric version of a column (text numbers with thousands separators accepted)."""
    if pd.api.types.is_bool_dtype(series):
        return None
    if pd.api.types.is_numeric_dtype(series):
        return pd.to_numeric(series, errors="coerce")
    if pd.api.types.is_datetime64_any_dtype(series):
        return None
    txt = series.dropna().astype(str).str.strip().str.replace(",", "", regex=False)
    if len(txt) == 0:
        return None
    conv = pd.to_numeric(txt, errors="coerce")
    if conv.notna().mean() < 0.9:
        return None
    return pd.to_numeric(series.astype(str).str.strip().str.replace(",", "", regex=False), errors="coerce")


def fmt_td(td):
    secs = int(round(pd.Timedelta(td).total_seconds()))
    if secs % 86400 == 0:
        return "%d day%s" % (secs // 86400, "" if secs == 86400 else "s")
    if secs % 3600 == 0:
        return "%d h" % (secs // 3600)
    if secs % 60 == 0:
        return "%d min" % (secs // 60)
    return "%d s" % secs
# --- end of shared helpers -----------------------------------------------------------
