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


def cars():
    g = random.Random(23)
    makes = {"Toyota": 1.0, "Ford": 0.85, "BMW": 1.45, "Honda": 0.95, "Kia": 0.8}
    fuels = ["petrol", "petrol", "petrol", "diesel", "hybrid", "electric"]
    rows = []
    for i in range(400):
        make = g.choice(list(makes))
        year = g.randint(2005, 2022)
        fuel = g.choice(fuels)
        km = int(max(1000, g.gauss((2024 - year) * 14000, 25000)))
        engine = "" if fuel == "electric" else round(g.choice([1.2, 1.4, 1.6, 1.8, 2.0, 2.5, 3.0]), 1)
        owners = min(5, 1 + int(g.expovariate(0.9)))
        accident = "Yes" if g.random() < 0.22 else "No"
        price = makes[make] * 30000 * (0.9 ** (2024 - year)) - km * 0.02 + g.gauss(0, 1500)
        if accident == "Yes":
            price *= 0.85
        price = round(max(900, price), 2) if i % 37 != 5 else ""
        gearbox = "automatic" if g.random() < 0.6 else "manual"
        day = 1 + (i * 7) % 365
        month = 1
        days = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        while day > days[month - 1]:
            day -= days[month - 1]
            month += 1
        rows.append([f"C{5000 + i}", make, year, km, engine, fuel, gearbox, owners, accident,
                     price, f"2024-{month:02d}-{day:02d}"])
    write("used_cars.csv", ["car_id", "make", "model_year", "odometer_km", "engine_l", "fuel",
                            "transmission", "owners", "accident_history", "price_usd",
                            "listed_on"], rows)


def air():
    g = random.Random(29)
    stations = {"North": 0.8, "South": 1.0, "East": 1.3, "West": 0.9}
    rows = []
    for name, level in stations.items():
        for d in range(365):
            month = 1
            day = d + 1
            days = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            while day > days[month - 1]:
                day -= days[month - 1]
                month += 1
            season = math.cos((d - 200) / 365 * 2 * math.pi)
            temp = round(11 + 12 * season + g.gauss(0, 3), 1)
            wind = round(max(0.2, g.gauss(3.5, 1.6)), 1)
            rain = round(g.expovariate(0.4), 1) if g.random() < 0.35 else 0.0
            pm25 = max(1.0, level * (18 - 2.2 * wind - 4 * season) + g.gauss(0, 4))
            if g.random() < 0.02:
                pm25 *= 4  # a fire or a festival
            pm10 = pm25 * 1.6 + g.gauss(0, 5)
            no2 = max(2.0, level * 30 - 3 * wind + g.gauss(0, 6))
            o3 = max(5.0, 45 + 1.4 * temp - 0.3 * no2 + g.gauss(0, 8))
            cat = "good" if pm25 < 12 else "moderate" if pm25 < 35 else "unhealthy"
            pm25_s = "" if g.random() < 0.04 else round(pm25, 1)
            rows.append([name, f"2023-{month:02d}-{day:02d}", pm25_s, round(pm10, 1), round(no2, 1),
                         round(o3, 1), temp, wind, rain, cat])
    write("air_quality.csv", ["station", "date", "pm25", "pm10", "no2", "o3", "temp_c", "wind_ms",
                              "rain_mm", "category"], rows)


def hotels():
    g = random.Random(41)
    months = ["January", "February", "March", "April", "May", "June", "July", "August",
              "September", "October", "November", "December"]
    segments = [("Online TA", 0.45), ("Offline TA/TO", 0.2), ("Direct", 0.15), ("Corporate", 0.08),
                ("Groups", 0.12)]
    countries = ["PRT", "GBR", "FRA", "ESP", "DEU", "ITA", "IRL", "BEL", "BRA", "NLD", "USA", "CHE"]
    rows = []
    for i in range(900):
        hotel = "City Hotel" if g.random() < 0.6 else "Resort Hotel"
        m = g.randrange(12)
        summer = math.cos((m - 6.5) / 12 * 2 * math.pi)
        r, seg = g.random(), segments[-1][0]
        for name, share in segments:
            if r < share:
                seg = name
                break
            r -= share
        lead = int(g.expovariate(1 / 95)) if seg != "Groups" else int(g.uniform(60, 300))
        wkend = g.choice([0, 0, 1, 1, 2, 2, 2, 3, 4])
        wk = max(0, int(g.gauss(2.6 if hotel == "City Hotel" else 3.6, 1.8)))
        adults = g.choice([1, 2, 2, 2, 2, 2, 3, 3, 4])
        children = g.choice([0, 0, 0, 0, 0, 1, 2])
        children_s = "" if g.random() < 0.03 else children
        base = 105 if hotel == "City Hotel" else 92
        adr = max(0.0, base + 38 * summer + 9 * children + g.gauss(0, 24) - 0.04 * lead)
        if g.random() < 0.01:
            adr *= 3.5  # a suite booked at the last minute
        cancel = 1 if g.random() < 0.22 + 0.0011 * lead else 0
        requests = g.choice([0, 0, 0, 1, 1, 2, 3])
        rows.append([f"BK{10000 + i}", hotel, lead, months[m], wkend, wk, adults, children_s,
                     round(adr, 2), cancel, seg, requests, g.choice(countries)])
    write("hotel_bookings.csv", ["booking_id", "hotel", "lead_time", "arrival_date_month",
                                 "stays_in_weekend_nights", "stays_in_week_nights", "adults",
                                 "children", "adr", "is_canceled", "market_segment",
                                 "total_of_special_requests", "country"], rows)


def crops():
    g = random.Random(23)
    regions = ["North", "South", "East", "West"]
    crops_ = ["wheat", "maize", "barley", "soy", "sorghum"]
    rows = []
    for i in range(520):
        region = g.choice(regions)
        crop = g.choice(crops_)
        year = g.choice([2020, 2021, 2022, 2023])
        day = g.randint(60, 140)
        date = f"{year}-{1 + day // 31:02d}-{1 + day % 28:02d}"
        rain = round(max(80.0, g.gauss(420 + 60 * regions.index(region), 110)), 1)
        temp = round(g.gauss(18.5 - regions.index(region), 2.6), 1)
        fert = round(max(0.0, g.gauss(140, 45)), 1)
        irrigated = int(g.random() < 0.37)
        ph = round(min(8.6, max(4.8, g.gauss(6.5, 0.55))), 2)
        pests = min(12, int(g.expovariate(1 / 2.2)))
        yld = round(max(0.4, 1.2 + 0.006 * rain + 0.011 * fert + 0.7 * irrigated - 0.12 * pests
                        + g.gauss(0, 0.8)), 2)
        loss = round(max(0.0, 3 + 1.4 * pests + 0.35 * (temp - 18) + g.gauss(0, 2.5)), 2)
        rows.append([f"F{3000 + i}", region, crop, date,
                     "" if i % 29 == 3 else rain, temp,
                     "" if i % 41 == 7 else fert, irrigated, ph, pests, yld,
                     "" if i % 37 == 11 else loss])
    write("crop_fields.csv", ["field_id", "Region", "crop", "planting_date", "rainfall_mm", "AvgTempC",
                              "fertilizer kg/ha", "irrigated", "soil_pH", "pest_incidents", "yield_t_ha",
                              "harvest_loss_pct"], rows)


def houses():
    g = random.Random(53)
    hoods = ["Ballard", "Fremont", "Capitol Hill", "Queen Anne", "Rainier Valley", "West Seattle"]
    zips = {"Ballard": 98107, "Fremont": 98103, "Capitol Hill": 98102, "Queen Anne": 98109,
            "Rainier Valley": 98118, "West Seattle": 98116}
    rows = []
    for i in range(640):
        hood = g.choice(hoods)
        beds = g.choice([1, 2, 2, 3, 3, 3, 4, 4, 5, 6])
        baths = round(max(1.0, beds * 0.6 + g.choice([-0.5, 0, 0.25, 0.5, 0.75])) * 4) / 4
        sqft = int(max(420, g.gauss(650 + 420 * beds, 260)))
        lot = int(max(900, g.lognormvariate(8.6, 0.45)))
        floors = g.choice([1, 1, 1.5, 2, 2, 3])
        water = int(g.random() < 0.06)
        cond = g.choice([2, 3, 3, 3, 3, 4, 4, 5])
        built = g.randint(1905, 2015)
        month = g.randint(1, 12)
        day = g.randint(1, 28)
        year = 2014 if month >= 5 else 2015
        price = (90000 + 310 * sqft + 45000 * water * 3 + 12000 * cond + 900 * (built - 1950)
                 + 60000 * hoods.index(hood) % 150000 + g.gauss(0, 70000))
        rows.append([f"H{7100 + i}", f"{year}-{month:02d}-{day:02d}", int(max(95000, price)), beds,
                     baths, "" if i % 53 == 5 else sqft, lot, floors, water, cond, built,
                     zips[hood], hood])
    write("house_sales.csv", ["id", "date", "price", "bedrooms", "bathrooms", "sqft_living",
                              "sqft_lot", "floors", "waterfront", "condition", "yr_built", "zipcode",
                              "neighbourhood"], rows)


def weather():
    g = random.Random(61)
    places = {"Sydney": 0.0, "Melbourne": -3.5, "Brisbane": 3.0}
    dirs = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
    rows = []
    for place, shift in places.items():
        for d in range(365):
            days = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            month, day = 1, d + 1
            while day > days[month - 1]:
                day -= days[month - 1]
                month += 1
            summer = math.cos((d - 15) / 365 * 2 * math.pi)
            tmin = round(12 + shift + 6 * summer + g.gauss(0, 2.2), 1)
            tmax = round(tmin + 8 + 2 * summer + g.gauss(0, 2.5), 1)
            hum9 = int(min(100, max(15, g.gauss(68, 14))))
            hum3 = int(min(100, max(8, hum9 - 15 + g.gauss(0, 12))))
            rain = round(g.expovariate(0.25), 1) if g.random() < 0.12 + hum3 / 400 else 0.0
            gust = "" if g.random() < 0.03 else int(max(9, g.gauss(40, 12)))
            press = round(g.gauss(1017.5 - 3 * summer, 6), 1)
            rows.append([f"2017-{month:02d}-{day:02d}", place, tmin, tmax, rain, g.choice(dirs), gust,
                         hum9, hum3, press, "Yes" if rain >= 1 else "No"])
    write("weather_aus.csv", ["Date", "Location", "MinTemp", "MaxTemp", "Rainfall", "WindGustDir",
                              "WindGustSpeed", "Humidity9am", "Humidity3pm", "Pressure9am", "RainToday"],
          rows)


if __name__ == "__main__":
    os.makedirs(os.path.join(HERE, "tables"), exist_ok=True)
    flights()
    clinic()
    bikes()
    staff()
    cars()
    air()
    hotels()
    crops()
    houses()
    weather()
