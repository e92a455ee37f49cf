#!/usr/bin/env python3
"""Generate the synthetic example data for Sandalyst (stdlib only, deterministic).

Default (reference case):
    python3 examples/generate_building_energy.py
writes examples/building_energy.csv (columns timestamp,energy_kwh,outdoor_temp_c:
hourly, 8 weeks from Monday 2024-05-06) and examples/building_energy.events.json,
the ground truth: the planted abnormal events and a few ordinary noisy hours that an
analyst must NOT report.

Variant for tests:
    python3 examples/generate_building_energy.py --variant alt
writes tests/fixtures/chiller_plant.csv (columns site_id,reading_time,power_kw,oat_f:
time column not first, US date format, Fahrenheit, 30-minute interval, some missing
rows and two duplicated rows, 6 weeks from Monday 2023-07-03) and
tests/fixtures/chiller_plant.events.json.

Both files are rebuilt bit for bit from the fixed seeds; `--out DIR` writes the CSV and
its sidecar into DIR instead. The sidecar's "start"/"end" are the timestamps of the
first and last affected readings (inclusive), in the CSV's local time.

The model of the building (reference case):
  * base load ~38 kWh per hour at nights and on weekends;
  * weekday occupancy ramps up 06:00-08:00, full 08:00-18:00, down by 21:00
    (+70 kWh at full occupancy); Saturday mornings a light 09:00-13:00 shift;
  * heating below 15 deg C (2.2 kWh per deg C, half of it when unoccupied) and cooling
    above 22 deg C (3.2 kWh per deg C, 30 % of it when unoccupied);
  * multiplicative noise (2.5 %) plus 1 kWh additive noise;
  * outdoor temperature: seasonal rise from ~13 to ~21 deg C, a daily cycle peaking
    at 15:00, weather fronts (AR(1) day-to-day), and a hot spell 2024-06-17..19 whose
    extra cooling is normal (explained by temperature) and must not be flagged.
"""

import argparse
import datetime as dt
import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def daily_offsets(rng, days, phi, sd):
    """AR(1) day-to-day weather offsets."""
    out, x = [], 0.0
    for _ in range(days + 2):
        x = phi * x + rng.gauss(0.0, sd)
        out.append(x)
    return out


def interp_daily(offsets, t_days):
    """Smoothly interpolate daily offsets (cosine) at a fractional day."""
    i = int(math.floor(t_days))
    f = t_days - i
    w = (1 - math.cos(math.pi * f)) / 2
    return offsets[i] * (1 - w) + offsets[i + 1] * w


def in_span(t, start, end):
    return start <= t <= end


# --------------------------------------------------------------------------------------
# Reference case: office building, hourly, kWh and deg C
# --------------------------------------------------------------------------------------

REF_EVENTS = [
    {
        "id": "weekend_night_equipment",
        "kind": "spike",
        "start": "2024-05-25 22:00",
        "end": "2024-05-26 05:00",
        "description": "Saturday night into Sunday: equipment left running, about +85 % "
        "over the base load for 8 hours",
    },
    {
        "id": "weekday_evening_overrun",
        "kind": "spike",
        "start": "2024-06-06 19:00",
        "end": "2024-06-06 23:00",
        "description": "Thursday evening: lighting and HVAC stay at working-hours level "
        "until midnight (schedule fault), 5 hours",
    },
    {
        "id": "weekday_outage",
        "kind": "drop",
        "start": "2024-06-12 10:00",
        "end": "2024-06-12 14:00",
        "description": "Wednesday late morning: near-zero readings for 5 hours (outage "
        "or meter fault)",
    },
]

REF_NOISE = [
    {"time": "2024-05-15 14:00", "factor": 1.08, "description": "+8 % on a weekday afternoon"},
    {"time": "2024-05-29 11:00", "factor": 0.93, "description": "-7 % on a weekday morning"},
    {"time": "2024-06-05 03:00", "factor": 1.10, "description": "+10 % on a weekday night"},
]


def ref_occupancy(t):
    h, dow = t.hour, t.weekday()
    if dow < 5:
        table = {6: 0.3, 7: 0.7, 18: 0.6, 19: 0.3, 20: 0.1}
        if 8 <= h < 18:
            return 1.0
        return table.get(h, 0.0)
    if dow == 5 and 9 <= h < 13:
        return 0.25
    return 0.0


# The same building, the 8 weeks after the reference export (for re-runs on new data):
# other dates, other planted events, a hot spell in August.
NEXT_EVENTS = [
    {
        "id": "weekend_day_equipment",
        "kind": "spike",
        "start": "2024-07-14 10:00",
        "end": "2024-07-14 16:00",
        "description": "Sunday daytime: equipment left running, about +85 % over the base "
        "load for 7 hours",
    },
    {
        "id": "weekday_evening_overrun_2",
        "kind": "spike",
        "start": "2024-07-30 19:00",
        "end": "2024-07-30 23:00",
        "description": "Tuesday evening: lighting and HVAC stay at working-hours level "
        "until midnight (schedule fault), 5 hours",
    },
    {
        "id": "weekday_outage_2",
        "kind": "drop",
        "start": "2024-08-16 09:00",
        "end": "2024-08-16 12:00",
        "description": "Friday morning: near-zero readings for 4 hours (outage or meter fault)",
    },
]

NEXT_NOISE = [
    {"time": "2024-07-09 15:00", "factor": 1.08, "description": "+8 % on a weekday afternoon"},
    {"time": "2024-08-07 10:00", "factor": 0.93, "description": "-7 % on a weekday morning"},
]

# How each planted event changes the reading (event id -> effect).
EFFECTS = {
    "weekend_night_equipment": "left_running",
    "weekend_day_equipment": "left_running",
    "weekday_evening_overrun": "overrun",
    "weekday_evening_overrun_2": "overrun",
    "weekday_outage": "outage",
    "weekday_outage_2": "outage",
}

REFERENCE = {
    "seed": 20240506,
    "start": dt.datetime(2024, 5, 6, 0, 0),
    "temp": (13.0, 8.0),
    "hot": (dt.datetime(2024, 6, 17), dt.datetime(2024, 6, 20)),
    "events": REF_EVENTS,
    "noise": REF_NOISE,
    "file": "building_energy",
}

NEXT = {
    "seed": 20240701,
    "start": dt.datetime(2024, 7, 1, 0, 0),
    "temp": (20.0, 2.0),
    "hot": (dt.datetime(2024, 8, 5), dt.datetime(2024, 8, 8)),
    "events": NEXT_EVENTS,
    "noise": NEXT_NOISE,
    "file": "building_energy_next",
}


def generate_reference(out_dir, spec=REFERENCE):
    rng = random.Random(spec["seed"])
    start = spec["start"]
    days = 56
    fronts = daily_offsets(rng, days, 0.75, 2.0)
    parse = lambda s: dt.datetime.strptime(s, "%Y-%m-%d %H:%M")
    events = [(parse(e["start"]), parse(e["end"]), e) for e in spec["events"]]
    noise = {parse(n["time"]): n["factor"] for n in spec["noise"]}
    hot_start, hot_end = spec["hot"]

    rows = []
    for i in range(days * 24):
        t = start + dt.timedelta(hours=i)
        d = i / 24.0
        temp = spec["temp"][0] + spec["temp"][1] * d / days
        temp += 5.0 * math.sin(2 * math.pi * (t.hour - 9) / 24.0)
        temp += interp_daily(fronts, d)
        if hot_start <= t < hot_end:
            temp += 6.0
        temp += rng.gauss(0.0, 0.4)
        temp = round(temp, 1)

        occ = ref_occupancy(t)
        occupied = occ > 0.2
        level = 38.0 + 70.0 * occ
        level += 2.2 * max(15.0 - temp, 0.0) * (1.0 if occupied else 0.5)
        level += 3.2 * max(temp - 22.0, 0.0) * (1.0 if occupied else 0.3)
        value = level * (1 + rng.gauss(0.0, 0.025)) + rng.gauss(0.0, 1.0)

        for s, e, ev in events:
            if in_span(t, s, e):
                effect = EFFECTS[ev["id"]]
                if effect == "left_running":
                    value = level * 1.85 + rng.gauss(0.0, 1.5)
                elif effect == "overrun":
                    value = 38.0 + 70.0 + 2.2 * max(15.0 - temp, 0.0)
                    value += 3.2 * max(temp - 22.0, 0.0) + rng.gauss(0.0, 2.0)
                elif effect == "outage":
                    value = rng.uniform(0.2, 1.4)
        if t in noise:
            value = level * noise[t]
        rows.append((t.strftime("%Y-%m-%d %H:%M:%S"), "%.2f" % value, "%.1f" % temp))

    csv_path = os.path.join(out_dir, spec["file"] + ".csv")
    with open(csv_path, "w", newline="") as f:
        f.write("timestamp,energy_kwh,outdoor_temp_c\n")
        for r in rows:
            f.write(",".join(r) + "\n")
    sidecar = {
        "file": spec["file"] + ".csv",
        "columns": ["timestamp", "energy_kwh", "outdoor_temp_c"],
        "interval_minutes": 60,
        "rows": len(rows),
        "time_format": "%Y-%m-%d %H:%M:%S (local time)",
        "events": spec["events"],
        "normal_noise": [
            {"time": n["time"], "description": n["description"]} for n in spec["noise"]
        ],
        "normal_but_unusual": [
            {
                "start": hot_start.strftime("%Y-%m-%d %H:%M"),
                "end": (hot_end - dt.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M"),
                "description": "hot spell (+6 deg C): higher cooling load, fully explained "
                "by outdoor temperature",
            }
        ],
    }
    write_json(os.path.join(out_dir, spec["file"] + ".events.json"), sidecar)
    return csv_path, len(rows)


# --------------------------------------------------------------------------------------
# Variant: chiller plant, 30 minutes, kW and deg F, time column second
# --------------------------------------------------------------------------------------

ALT_EVENTS = [
    {
        "id": "heatwave_extra_load",
        "kind": "spike",
        "start": "2023-07-26 13:00",
        "end": "2023-07-26 17:30",
        "description": "Third afternoon of a heat wave: about +35 % power beyond what the "
        "outdoor temperature explains (e.g. fouled condenser, extra chiller staged)",
    },
    {
        "id": "stuck_meter",
        "kind": "flat",
        "start": "2023-08-08 09:00",
        "end": "2023-08-08 14:30",
        "description": "Tuesday: the meter repeats the 08:30 reading for 6 hours",
    },
]

ALT_NOISE = [
    {"time": "2023-07-12 15:00", "factor": 1.07, "description": "+7 % on a weekday afternoon"},
    {"time": "2023-08-01 02:30", "factor": 0.92, "description": "-8 % on a weekday night"},
]


def alt_occupancy(t):
    h = t.hour + t.minute / 60.0
    if t.weekday() < 5:
        if 6.0 <= h < 7.5:
            return 0.5
        if 7.5 <= h < 19.0:
            return 1.0
        if 19.0 <= h < 20.0:
            return 0.4
        return 0.0
    if 8.0 <= h < 17.0:
        return 0.4
    return 0.0


def generate_alt(out_dir):
    rng = random.Random(20230703)
    start = dt.datetime(2023, 7, 3, 0, 0)
    days = 42
    step = dt.timedelta(minutes=30)
    fronts = daily_offsets(rng, days, 0.7, 3.0)
    parse = lambda s: dt.datetime.strptime(s, "%Y-%m-%d %H:%M")
    heat_start, heat_end = dt.datetime(2023, 7, 24), dt.datetime(2023, 7, 28)
    ev_spike = (parse(ALT_EVENTS[0]["start"]), parse(ALT_EVENTS[0]["end"]))
    ev_flat = (parse(ALT_EVENTS[1]["start"]), parse(ALT_EVENTS[1]["end"]))
    noise = {parse(n["time"]): n["factor"] for n in ALT_NOISE}
    gap = (dt.datetime(2023, 8, 2, 2, 0), dt.datetime(2023, 8, 2, 4, 30))

    rows, stuck = [], None
    n = days * 48
    for i in range(n):
        t = start + step * i
        d = i / 48.0
        hour = t.hour + t.minute / 60.0
        oat = 79.0 + 9.0 * math.sin(2 * math.pi * (hour - 9.5) / 24.0)
        oat += interp_daily(fronts, d)
        if heat_start <= t < heat_end:
            oat += 13.0
        oat += rng.gauss(0.0, 0.6)
        oat = round(oat, 1)

        occ = alt_occupancy(t)
        level = 120.0 + 150.0 * occ
        level += max(oat - 65.0, 0.0) * (4.0 + 5.0 * occ)
        value = level * (1 + rng.gauss(0.0, 0.02)) + rng.gauss(0.0, 3.0)
        if in_span(t, *ev_spike):
            value = level * 1.35 * (1 + rng.gauss(0.0, 0.02))
        if t in noise:
            value = level * noise[t]
        value = round(value, 1)
        if t == ev_flat[0] - step:
            stuck = value
        if in_span(t, *ev_flat):
            value = stuck
        rows.append([t, value, oat])

    # Missing readings: a 3-hour logger gap plus 30 scattered readings (never inside the
    # planted events or on the noise hours, so the ground truth stays exact).
    protected = lambda t: in_span(t, *ev_spike) or in_span(t, ev_flat[0] - step, ev_flat[1]) or t in noise
    rows = [r for r in rows if not in_span(r[0], *gap)]
    candidates = [k for k, r in enumerate(rows) if not protected(r[0])]
    drop = set(rng.sample(candidates, 30))
    rows = [r for k, r in enumerate(rows) if k not in drop]
    # Two readings exported twice (duplicate timestamps, identical values).
    dups = [rows[300], rows[1500]]
    rows = rows[:301] + [dups[0]] + rows[301:1501] + [dups[1]] + rows[1501:]

    csv_path = os.path.join(out_dir, "chiller_plant.csv")
    with open(csv_path, "w", newline="") as f:
        f.write("site_id,reading_time,power_kw,oat_f\n")
        for t, v, o in rows:
            f.write("PLANT-02,%s,%.1f,%.1f\n" % (t.strftime("%m/%d/%Y %H:%M"), v, o))
    sidecar = {
        "file": "chiller_plant.csv",
        "columns": ["site_id", "reading_time", "power_kw", "oat_f"],
        "interval_minutes": 30,
        "rows": len(rows),
        "time_format": "%m/%d/%Y %H:%M (local time)",
        "missing_readings": n - (len(rows) - 2),
        "duplicated_rows": 2,
        "events": ALT_EVENTS,
        "normal_noise": [{"time": x["time"], "description": x["description"]} for x in ALT_NOISE],
        "normal_but_unusual": [
            {
                "start": "2023-07-24 00:00",
                "end": "2023-07-27 23:30",
                "description": "heat wave (+13 deg F): higher chiller load explained by "
                "outdoor temperature, except the planted afternoon",
            },
            {
                "start": "2023-08-02 02:00",
                "end": "2023-08-02 04:30",
                "description": "logger gap: readings missing, not an energy event",
            },
        ],
    }
    write_json(os.path.join(out_dir, "chiller_plant.events.json"), sidecar)
    return csv_path, len(rows)


def write_json(path, obj):
    with open(path, "w", newline="") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["reference", "alt", "next"], default="reference")
    ap.add_argument("--out", help="output directory (default: examples/ or tests/fixtures/)")
    args = ap.parse_args(argv)
    if args.variant == "alt":
        out = args.out or os.path.join(ROOT, "tests", "fixtures")
        os.makedirs(out, exist_ok=True)
        path, n = generate_alt(out)
        events = ALT_EVENTS
    elif args.variant == "next":
        out = args.out or os.path.join(ROOT, "tests", "fixtures")
        os.makedirs(out, exist_ok=True)
        path, n = generate_reference(out, NEXT)
        events = NEXT_EVENTS
    else:
        out = args.out or HERE
        os.makedirs(out, exist_ok=True)
        path, n = generate_reference(out)
        events = REF_EVENTS
    print("wrote %s (%d rows)" % (os.path.relpath(path), n))
    for e in events:
        print("  planted %-24s %-5s %s .. %s" % (e["id"], e["kind"], e["start"], e["end"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
