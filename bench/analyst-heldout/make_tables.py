#!/usr/bin/env python3
"""Generate the held-out tables (seeded, deterministic) into ./tables/.

Eight small tables shaped like public datasets analysts use. Every table has its own
seed, so changing one table never changes another. Run once; the CSVs are committed
with this script and are the reference: answers.py reads the CSVs, not this script.

    python3 make_tables.py          # writes tables/*.csv
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tables")


def dates(rng, start, end, n, weights=None):
    days = pd.date_range(start, end, freq="D")
    if weights is not None:
        w = np.asarray(weights, dtype=float)
        w = w / w.sum()
        idx = rng.choice(len(days), size=n, p=w)
    else:
        idx = rng.integers(0, len(days), size=n)
    return days[idx]


def blank(rng, s: pd.Series, share: float) -> pd.Series:
    """Set a random share of the values to missing."""
    s = s.astype(object) if s.dtype.kind in "OUS" else s.astype(float)
    mask = rng.random(len(s)) < share
    s = s.copy()
    s[mask] = np.nan
    return s


def ferry_manifest():
    """A passenger manifest of a ferry that sank (rescued or not)."""
    rng = np.random.default_rng(41001)
    n = 880
    tier = rng.choice(["Premium", "Standard", "Economy"], size=n, p=[0.22, 0.30, 0.48])
    gender = rng.choice(["male", "female"], size=n, p=[0.56, 0.44])
    age = np.clip(rng.normal(33, 14, n), 0.4, 79).round(0)
    kids = rng.random(n) < 0.07
    age[kids] = rng.integers(1, 13, kids.sum())
    companions = rng.poisson(0.6, n)
    base = {"Premium": 78.0, "Standard": 34.0, "Economy": 16.0}
    price = np.array([base[t] for t in tier]) * rng.lognormal(0, 0.35, n) + companions * 2.5
    suites = rng.choice(np.where(tier == "Premium")[0], size=6, replace=False)
    price[suites] = rng.uniform(390, 520, 6)
    p_rescue = np.array([{"Premium": 0.47, "Standard": 0.41, "Economy": 0.37}[t] for t in tier])
    p_rescue = p_rescue + np.where(gender == "female", 0.12, -0.06) + np.where(age < 13, 0.15, 0)
    rescued = (rng.random(n) < np.clip(p_rescue, 0.02, 0.98)).astype(int)
    port = rng.choice(["Harwich", "Hull", "Newcastle"], size=n, p=[0.58, 0.27, 0.15])
    travel = dates(rng, "2022-05-01", "2022-09-30", n)
    cabin = np.array([f"{rng.choice(list('ABCDE'))}{rng.integers(1, 120)}" for _ in range(n)], dtype=object)
    no_cabin = (tier == "Economy") | (rng.random(n) < 0.35)
    cabin[no_cabin] = np.nan
    df = pd.DataFrame({
        "BookingRef": [f"FM{10000 + i * 7}" for i in range(n)],
        "cabin_tier": tier,
        "traveller_gender": gender,
        "AgeAtTravel": blank(rng, pd.Series(age), 0.14).astype("Int64"),
        "companions": companions,
        "TicketPrice": price.round(2),
        "Departure Port": port,
        "travel_date": travel.strftime("%Y-%m-%d"),
        "cabin_no": cabin,
        "Rescued": rescued,
    })
    return "ferry_manifest.csv", df


def property_sales():
    """Residential property sales of one county (like the Ames / King County tables)."""
    rng = np.random.default_rng(41002)
    n = 1200
    hoods = ["Riverside", "Old Town", "Hillcrest", "Eastfield", "Northgate", "Brookvale"]
    factor = {"Riverside": 1.18, "Old Town": 1.05, "Hillcrest": 1.32, "Eastfield": 0.86,
              "Northgate": 0.95, "Brookvale": 1.02}
    hood = rng.choice(hoods, size=n, p=[0.17, 0.2, 0.12, 0.2, 0.18, 0.13])
    area = rng.gamma(9.0, 14.5, n).clip(38, 480).round(1)
    beds = np.clip((area / 38).round() + rng.integers(-1, 2, n), 1, 6).astype(int)
    baths = np.clip((area / 70).round() + rng.integers(0, 2, n), 1, 4).astype(int)
    built = np.clip(rng.normal(1975, 28, n).round(), 1890, 2022).astype(int)
    garage = (rng.random(n) < 0.68).astype(int)
    cond = np.clip(rng.normal(6, 1.5, n).round(), 1, 10).astype(int)
    lot = (area * rng.uniform(1.8, 5.5, n)).round(0)
    price = (1650 * area * np.array([factor[h] for h in hood])
             * rng.lognormal(0, 0.18, n) + 14000 * garage + 2500 * (cond - 6)
             + 60 * (built - 1975))
    price = (np.round(price / 500) * 500).astype(int)
    sold = dates(rng, "2019-01-01", "2023-12-31", n)
    df = pd.DataFrame({
        "ParcelID": [f"{rng.integers(100, 999)}-{rng.integers(1000, 9999)}-{i:04d}" for i in range(n)],
        "sale_date": sold.strftime("%Y-%m-%d"),
        "Neighbourhood": hood,
        "SalePrice": price,
        "LivingArea_m2": area,
        "LotSize_m2": blank(rng, pd.Series(lot), 0.08).astype("Int64"),
        "BdRms": beds,
        "FullBath": baths,
        "ConstructionYr": built,
        "OverallCond": cond,
        "HasGarage": garage,
    })
    return "property_sales.csv", df


def exam_results():
    """End-of-year exam results of four schools (like the student-performance tables)."""
    rng = np.random.default_rng(41003)
    n = 640
    schools = ["Ashford High", "Bramley Academy", "Carrow School", "Dunmore College"]
    school = rng.choice(schools, size=n, p=[0.3, 0.25, 0.25, 0.2])
    female = (rng.random(n) < 0.51).astype(int)
    study = rng.gamma(3.0, 2.4, n).clip(0, 30).round(1)
    tutor = np.where(rng.random(n) < 0.3, "yes", "no")
    parent = rng.choice(["none", "secondary", "bachelor", "master+"], size=n, p=[0.1, 0.45, 0.3, 0.15])
    attendance = (100 * rng.beta(12, 1.6, n)).round(1)
    bonus = {"Ashford High": 0, "Bramley Academy": 3, "Carrow School": -2, "Dunmore College": 1}
    sb = np.array([bonus[s] for s in school])
    algebra = np.clip(44 + 1.9 * study + 2.6 * (tutor == "yes") + sb + 0.12 * (attendance - 88)
                      + rng.normal(0, 12, n), 0, 100).round().astype(int)
    reading = np.clip(50 + 0.45 * (algebra - 58) + 3.5 * female + sb + rng.normal(0, 10, n),
                      0, 100).round().astype(int)
    essay = np.clip(48 + 0.5 * (reading - 60) + 4 * female + rng.normal(0, 11, n), 0, 100).round()
    df = pd.DataFrame({
        "CandidateNo": [f"C{20500 + 3 * i}" for i in range(n)],
        "school": school,
        "female": female,
        "ParentEdu": parent,
        "private_tutor": tutor,
        "StudyHrsWk": study,
        "attendance_pct": attendance,
        "AlgebraPts": algebra,
        "Reading Comp": reading,
        "essay_score": blank(rng, pd.Series(essay), 0.06).astype("Int64"),
    })
    return "exam_results.csv", df


def station_weather():
    """Daily observations of five weather stations for 2023 (GHCN-Daily style)."""
    rng = np.random.default_rng(41004)
    stations = [
        # id, state, annual mean of TMAX, seasonal amplitude, rain chance, mean rain, humidity
        ("USW00023050", "NM", 21.5, 12.5, 0.10, 4.0, 38),
        ("USW00014739", "MA", 15.5, 12.0, 0.32, 8.5, 66),
        ("USW00003017", "CO", 18.0, 12.0, 0.16, 5.5, 48),
        ("USW00012839", "FL", 29.0, 3.5, 0.36, 11.0, 74),
        ("USW00024233", "WA", 16.0, 8.5, 0.45, 6.0, 76),
    ]
    days = pd.date_range("2023-01-01", "2023-12-31", freq="D")
    doy = days.day_of_year.values
    rows = []
    for sid, state, tmean, amp, pr, mr, rh in stations:
        season = -np.cos(2 * np.pi * (doy - 15) / 365)
        tmax = tmean + amp * season + rng.normal(0, 3.0, len(days))
        tmin = tmax - rng.gamma(6, 1.7, len(days))
        wet = rng.random(len(days)) < pr
        prcp = np.where(wet, rng.exponential(mr, len(days)), 0.0)
        wind = rng.gamma(4, 3.6, len(days)) + 4 * wet
        hum = np.clip(rh - 0.6 * (tmax - tmean) + 12 * wet + rng.normal(0, 7, len(days)), 8, 100)
        snow = ((tmax < 1.5) & wet).astype(int)
        rows.append(pd.DataFrame({
            "station_id": sid,
            "state": state,
            "obs_date": days.strftime("%Y-%m-%d"),
            "TMAX_C": tmax.round(1),
            "TMIN_C": tmin.round(1),
            "PRCP_mm": prcp.round(1),
            "Wind Speed kmh": wind.round(1),
            "RH_pct": hum.round(0),
            "snow_flag": snow,
        }))
    df = pd.concat(rows, ignore_index=True)
    df["TMAX_C"] = blank(rng, df["TMAX_C"], 0.01)
    df["TMIN_C"] = blank(rng, df["TMIN_C"], 0.01)
    df["RH_pct"] = blank(rng, df["RH_pct"], 0.02).astype("Int64")
    return "station_weather.csv", df


def workforce():
    """An HR extract of employees (like the IBM attrition table)."""
    rng = np.random.default_rng(41005)
    n = 1100
    depts = ["Sales", "R&D", "Human Resources", "Finance", "Operations"]
    dept = rng.choice(depts, size=n, p=[0.3, 0.32, 0.08, 0.12, 0.18])
    level = rng.choice([1, 2, 3, 4, 5], size=n, p=[0.34, 0.3, 0.18, 0.12, 0.06])
    dmul = {"Sales": 1.0, "R&D": 1.12, "Human Resources": 0.9, "Finance": 1.2, "Operations": 0.93}
    income = (2600 + 2100 * (level - 1)) * np.array([dmul[d] for d in dept]) * rng.lognormal(0, 0.22, n)
    income = income.round(0).astype(int)
    age = np.clip(22 + 4.5 * (level - 1) + rng.gamma(3, 3.2, n), 19, 62).round().astype(int)
    years = np.clip((rng.gamma(1.6, 3.8, n)).round(), 0, age - 18).astype(int)
    overtime = np.where(rng.random(n) < 0.29, "Yes", "No")
    p_leave = 0.13 + 0.06 * (overtime == "Yes") - 0.015 * np.minimum(years, 5)
    attrition = (rng.random(n) < np.clip(p_leave, 0.02, 0.9)).astype(int)
    perf = rng.choice([1, 2, 3, 4], size=n, p=[0.04, 0.14, 0.66, 0.16])
    ref = pd.Timestamp("2024-06-30")
    hire = [ref - pd.Timedelta(days=int(y * 365.25 + rng.integers(0, 360))) for y in years]
    df = pd.DataFrame({
        "EmpID": [f"E{3100 + 2 * i}" for i in range(n)],
        "Dept": dept,
        "JobLevel": level,
        "age_yrs": age,
        "MonthlyIncome": income,
        "YearsAtCompany": years,
        "HireDate": pd.DatetimeIndex(hire).strftime("%Y-%m-%d"),
        "OverTime": overtime,
        "PerfRating": perf,
        "commute_km": blank(rng, pd.Series(rng.gamma(2.0, 6.5, n).round(1)), 0.05),
        "remote": (rng.random(n) < 0.22).astype(int),
        "Attrition": attrition,
    })
    return "workforce.csv", df


def webshop_orders():
    """Order lines of an online shop for 2023 (like the UCI online-retail table)."""
    rng = np.random.default_rng(41006)
    n = 1500
    days = pd.date_range("2023-01-01", "2023-12-31", freq="D")
    w = 1 + 0.9 * np.exp(-((days.day_of_year.values - 335) / 22.0) ** 2)
    when = dates(rng, "2023-01-01", "2023-12-31", n, weights=w)
    country = rng.choice(["United Kingdom", "Germany", "France", "Netherlands", "Spain", "Ireland"],
                         size=n, p=[0.42, 0.17, 0.14, 0.1, 0.09, 0.08])
    cats = ["Home", "Garden", "Electronics", "Toys", "Apparel"]
    cat = rng.choice(cats, size=n, p=[0.26, 0.14, 0.18, 0.17, 0.25])
    base = {"Home": 18, "Garden": 24, "Electronics": 65, "Toys": 14, "Apparel": 29}
    price = (np.array([base[c] for c in cat]) * rng.lognormal(0, 0.4, n)).round(2)
    disc = rng.choice([0, 5, 10, 15, 20], size=n, p=[0.58, 0.14, 0.14, 0.08, 0.06])
    qty = 1 + rng.poisson(1.3 + 0.05 * disc, n)
    bulk = rng.choice(n, size=9, replace=False)
    qty[bulk] = rng.integers(14, 30, 9)
    total = (qty * price * (1 - disc / 100)).round(2)
    seg = rng.choice(["Consumer", "Corporate", "Small Business"], size=n, p=[0.62, 0.18, 0.2])
    df = pd.DataFrame({
        "InvoiceNo": [f"INV-{584000 + 3 * i}" for i in range(n)],
        "InvoiceDate": when.strftime("%Y-%m-%d"),
        "Country": country,
        "CustSegment": seg,
        "Category": cat,
        "Qty": qty,
        "ItemPrice": price,
        "DiscountPct": disc,
        "Total Sales": total,
        "ShipDays": blank(rng, pd.Series(rng.integers(1, 9, n)), 0.03).astype("Int64"),
        "returned": (rng.random(n) < 0.07).astype(int),
    })
    df = df.sort_values(["InvoiceDate", "InvoiceNo"]).reset_index(drop=True)
    return "webshop_orders.csv", df


def bp_trial():
    """A two-arm blood-pressure trial (baseline and week-12 systolic pressure)."""
    rng = np.random.default_rng(41007)
    n = 420
    arm = rng.choice(["Placebo", "Treatment"], size=n)
    site = rng.choice(["Leeds", "Bristol", "Glasgow", "Cardiff"], size=n)
    male = (rng.random(n) < 0.52).astype(int)
    age = rng.integers(40, 80, n)
    bmi = np.clip(rng.normal(28.4, 4.6, n), 17, 48).round(1)
    smoker = (rng.random(n) < 0.21).astype(int)
    base = np.clip(146 + 0.35 * (age - 60) + 0.6 * (bmi - 28) + rng.normal(0, 12, n), 110, 200).round()
    drop = np.where(arm == "Treatment", 8.0, 5.0)
    wk12 = (base - drop + rng.normal(0, 11, n)).round()
    ldl = rng.normal(128, 28, n)
    high = rng.choice(n, size=7, replace=False)
    ldl[high] = rng.uniform(235, 290, 7)
    enrol = dates(rng, "2021-03-01", "2022-06-30", n)
    df = pd.DataFrame({
        "subject_id": [f"S-{i + 1:03d}" for i in range(n)],
        "site": site,
        "enrol_date": enrol.strftime("%Y-%m-%d"),
        "arm": arm,
        "is_male": male,
        "age_at_enrolment": age,
        "BMI": blank(rng, pd.Series(bmi), 0.03),
        "smoker": smoker,
        "LDL mg/dL": ldl.round(0).astype(int),
        "baseline_sbp": base.astype(int),
        "wk12_sbp": blank(rng, pd.Series(wk12), 0.06).astype("Int64"),
        "adverse_event": (rng.random(n) < np.where(arm == "Treatment", 0.14, 0.09)).astype(int),
    })
    return "bp_trial.csv", df


def fuel_economy():
    """Fuel economy of car models (like the EPA fueleconomy.gov / mpg tables)."""
    rng = np.random.default_rng(41008)
    n = 520
    makes = ["Toyota", "Ford", "Honda", "Chevrolet", "BMW", "Hyundai", "Subaru", "Kia", "Mazda", "Volkswagen"]
    make = rng.choice(makes, size=n)
    year = rng.integers(2015, 2024, n)
    cyl = rng.choice([3, 4, 6, 8], size=n, p=[0.05, 0.58, 0.27, 0.10])
    displ = np.array([{3: 1.2, 4: 2.0, 6: 3.3, 8: 5.2}[c] for c in cyl]) + rng.normal(0, 0.25, n)
    displ = displ.clip(1.0, 6.8).round(1)
    hp = (displ * 72 + rng.normal(0, 22, n) + 2.5 * (year - 2015)).round()
    weight = (2300 + 480 * displ + rng.normal(0, 260, n)).round(-1)
    drive = rng.choice(["FWD", "RWD", "AWD", "4WD"], size=n, p=[0.45, 0.15, 0.28, 0.12])
    fuel = rng.choice(["Regular", "Premium", "Diesel", "Hybrid"], size=n, p=[0.6, 0.22, 0.06, 0.12])
    city = (58 - 0.0065 * weight - 1.6 * displ + np.where(fuel == "Hybrid", 14, 0)
            + np.where(fuel == "Diesel", 4, 0) - np.where(np.isin(drive, ["AWD", "4WD"]), 1.5, 0)
            + 0.25 * (year - 2015) + rng.normal(0, 1.8, n)).clip(9, 58).round()
    hwy = (city * 1.22 + 3 + rng.normal(0, 1.5, n) - np.where(fuel == "Hybrid", 6, 0)).clip(12, 60).round()
    comb = 1 / (0.55 / city + 0.45 / hwy)
    co2 = (np.where(fuel == "Diesel", 10180, 8887) / comb).round()
    df = pd.DataFrame({
        "make": make,
        "ModelYear": year,
        "cyl": cyl,
        "displ_L": displ,
        "hp": blank(rng, pd.Series(hp), 0.04).astype("Int64"),
        "curb_weight_lbs": weight.astype(int),
        "drive": drive,
        "fuel": fuel,
        "city mpg": city.astype(int),
        "HwyMPG": hwy.astype(int),
        "CO2_gpm": co2.astype(int),
    })
    return "fuel_economy.csv", df


def main():
    os.makedirs(OUT, exist_ok=True)
    for make in [ferry_manifest, property_sales, exam_results, station_weather,
                 workforce, webshop_orders, bp_trial, fuel_economy]:
        name, df = make()
        path = os.path.join(OUT, name)
        df.to_csv(path, index=False)
        print(f"{name}: {len(df)} rows, {len(df.columns)} columns, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
