#!/usr/bin/env python3
"""The tuning set's tables (standard library only, seeded). Tune the analyst on these,
never on bench/analyst-heldout."""
import csv
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, header, rows):
    with open(os.path.join(HERE, "tables", name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def flights():
    g = random.Random(7)
    carriers = ["Aerolux", "BlueJet", "Corvair", "Dunmore"]
    rows = []
    for i in range(600):
        c = g.choice(carriers)
        dist = round(g.uniform(200, 2400), 1)
        delay = round(max(-15, g.gauss(12 + carriers.index(c) * 4, 18)), 0)
        seats = g.randint(60, 220)
        load = round(min(100, max(20, g.gauss(78, 11))), 1) if i % 23 != 4 else ""
        month = g.randint(1, 12)
        weekend = int(g.random() < 0.3)
        rows.append([f"FL{1000 + i}", c, int(delay), dist, seats, load, month, weekend])
    write("flights.csv", ["FlightNo", "Carrier", "DepDelayMin", "Distance km", "SeatsSold",
                          "Load Factor %", "Month", "IsWeekend"], rows)


def clinic():
    g = random.Random(11)
    rows = []
    for i in range(450):
        age = g.randint(18, 90)
        bmi = round(g.gauss(26.5, 4.2), 1) if i % 31 != 7 else ""
        sbp = round(95 + 0.55 * age + g.gauss(0, 11))
        smoker = "Yes" if g.random() < 0.22 else "No"
        chol = round(g.gauss(195, 32) + (12 if smoker == "Yes" else 0), 0)
        day = 1 + (i * 7) % 365
        rows.append([f"PT{i:04d}", age, bmi, sbp, smoker, int(chol), f"2025-{1 + (day - 1) // 31 % 12:02d}-{1 + day % 28:02d}"])
    write("clinic_visits.csv", ["patient_id", "AgeYrs", "BMI", "Systolic BP", "Smoker",
                                "CholTotal", "visit_date"], rows)


def bikes():
    g = random.Random(13)
    stations = ["Harbour", "Old Town", "Campus", "Riverside", "Market"]
    seasons = ["winter", "spring", "summer", "autumn"]
    rows = []
    for i in range(730):
        s = g.choice(stations)
        season = seasons[(i // 61) % 4]
        temp = round(g.gauss([4, 13, 24, 12][seasons.index(season)], 4), 1)
        hum = round(min(100, max(15, g.gauss(65 - 0.6 * temp, 10))), 1)
        rentals = max(0, int(40 + 6 * temp - 0.4 * hum + g.gauss(0, 25) + stations.index(s) * 8))
        rows.append([s, season, temp, hum, rentals, int(g.random() < 0.28)])
    write("bike_rentals.csv", ["station_name", "season", "temp_c", "humidity_pct",
                               "rentals", "holiday"], rows)


def staff():
    # Column names as HR exports abbreviate them: skeletons (Qty, Yrs, Dept), prefixes
    # (Emp, Sal), acronyms (FTE, KPI) and camel case.
    g = random.Random(23)
    depts = ["Sales", "Ops", "IT", "Finance", "HR"]
    rows = []
    for i in range(520):
        d = g.choice(depts)
        age = g.randint(21, 64)
        yrs = max(0, min(age - 20, int(g.gauss(7, 5))))
        sal = round(32000 + yrs * 1800 + depts.index(d) * 2500 + g.gauss(0, 6000), 2)
        fte = g.choice([1.0, 1.0, 1.0, 0.8, 0.5])
        kpi = round(min(100, max(0, g.gauss(70 + yrs * 0.5, 12))), 1) if i % 31 != 5 else ""
        trn = g.randint(0, 40)
        mgr = int(g.random() < 0.15)
        rows.append([f"E{2000 + i}", d, age, yrs, sal, fte, kpi, trn, mgr])
    write("staff_roster.csv", ["EmpID", "Dept", "EmpAge", "YrsSvc", "AnnSal", "FTE", "KPIScore",
                               "TrngHrs", "IsMgr"], rows)


if __name__ == "__main__":
    os.makedirs(os.path.join(HERE, "tables"), exist_ok=True)
    flights()
    clinic()
    bikes()
    staff()
