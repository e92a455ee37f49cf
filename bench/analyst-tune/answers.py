#!/usr/bin/env python3
"""The tuning set's prompts (ticket style: question, constraints on the method, answer
format) and the pandas/scipy code that computes each answer; writes questions.jsonl.
Tune on these; the held-out set (bench/analyst-heldout) is only for measuring.

    docker run --rm --network none -v "$PWD:/t" -w /t IMAGE python3 answers.py
"""
import json
import os

import numpy as np
import pandas as pd
import scipy.stats as st

HERE = os.path.dirname(os.path.abspath(__file__))
T = {n: pd.read_csv(os.path.join(HERE, "tables", n)) for n in
     ("flights.csv", "clinic_visits.csv", "bike_rentals.csv")}
F, C, B = T["flights.csv"], T["clinic_visits.csv"], T["bike_rentals.csv"]
Q = []


def q(qid, table, tier, kind, prompt, answer, decimals=None, expect="right"):
    tol = {k: (0 if isinstance(v, str) or decimals is None else 10 ** -decimals) for k, v in answer.items()}
    ans = {k: (v if isinstance(v, str) or decimals is None else round(float(v), decimals)) for k, v in answer.items()}
    Q.append({"id": qid, "table": table, "tier": tier, "kind": kind, "prompt": prompt,
              "answer": ans, "tolerance": tol, "expect": expect})


q("t01", "flights.csv", "easy", "single_statistic",
  "Calculate the mean departure delay (DepDelayMin) of all flights. Use the arithmetic mean and ignore "
  "missing values. @mean_delay[mean_value] where \"mean_value\" is a number rounded to two decimal places.",
  {"mean_delay": F["DepDelayMin"].mean()}, 2)
q("t02", "flights.csv", "easy", "single_statistic",
  "What is the standard deviation of the seats sold? Compute the sample standard deviation (ddof = 1) with "
  "pandas. @std_seats[std_value] where \"std_value\" is a float rounded to 3 decimal places.",
  {"std_seats": F["SeatsSold"].std(ddof=1)}, 3)
q("t03", "flights.csv", "easy", "single_statistic",
  "Find the population variance of Distance km. The population variance is the sum of the squared "
  "deviations from the mean divided by n. @var_distance[value] where \"value\" is rounded to one decimal.",
  {"var_distance": F["Distance km"].var(ddof=0)}, 1)
r, p = st.pearsonr(C["AgeYrs"], C["Systolic BP"])
q("t04", "clinic_visits.csv", "easy", "correlation",
  "Is there a linear relationship between AgeYrs and Systolic BP? Calculate the Pearson correlation "
  "coefficient (r) and its p-value using scipy.stats.pearsonr. @correlation_coefficient[r_value] "
  "@p_value[p_value] where \"r_value\" is a number between -1 and 1 rounded to two decimal places and "
  "\"p_value\" is a number rounded to four decimal places.",
  {"correlation_coefficient": round(r, 2), "p_value": round(p, 4)}, None)
Q[-1]["tolerance"] = {"correlation_coefficient": 0.01, "p_value": 0.0001}
q("t05", "bike_rentals.csv", "easy", "correlation",
  "Compute the Spearman rank correlation between temp_c and rentals. Do not assume a linear relationship. "
  "@spearman_rho[rho] where rho is rounded to 3 decimals.",
  {"spearman_rho": st.spearmanr(B["temp_c"], B["rentals"])[0]}, 3)
q("t06", "clinic_visits.csv", "easy", "single_statistic",
  "What is the median BMI of the patients? Missing values should be excluded from the calculation. "
  "@median_bmi[median] where \"median\" is a number rounded to 1 decimal place.",
  {"median_bmi": C["BMI"].median()}, 1)
q("t07", "bike_rentals.csv", "easy", "single_statistic",
  "What is the 75th percentile of rentals? Use linear interpolation (the default quantile method of "
  "pandas). @p75_rentals[value] where \"value\" is a number rounded to two decimal places.",
  {"p75_rentals": B["rentals"].quantile(0.75)}, 2)
q("t08", "clinic_visits.csv", "easy", "single_statistic",
  "Calculate the interquartile range (IQR) of CholTotal, defined as Q3 minus Q1. @iqr_chol[iqr] where "
  "\"iqr\" is rounded to 2 decimal places.",
  {"iqr_chol": C["CholTotal"].quantile(0.75) - C["CholTotal"].quantile(0.25)}, 2)
q("t09", "flights.csv", "easy", "single_statistic",
  "What is the maximum departure delay? Return the largest value of DepDelayMin. @max_delay[value] where "
  "\"value\" is an integer.",
  {"max_delay": F["DepDelayMin"].max()}, 0)
q("t10", "flights.csv", "easy", "single_statistic",
  "What is the total number of seats sold across all flights? Sum SeatsSold over every row. "
  "@total_seats[total] where total is an integer.",
  {"total_seats": F["SeatsSold"].sum()}, 0)
q("t11", "clinic_visits.csv", "easy", "single_statistic",
  "What percentage of patients are smokers? Count the rows where Smoker is Yes, divide by the number of "
  "rows and multiply by 100. @smoker_pct[pct] where \"pct\" is a number between 0 and 100 rounded to two "
  "decimal places.",
  {"smoker_pct": 100 * (C["Smoker"] == "Yes").mean()}, 2)
q("t12", "flights.csv", "easy", "count_filter",
  "How many flights departed on a weekend (IsWeekend equals 1)? @weekend_flights[count] where count is "
  "an integer.",
  {"weekend_flights": int((F["IsWeekend"] == 1).sum())}, 0)
q("t13", "flights.csv", "easy", "group",
  "Which carrier has the highest average departure delay? Group by Carrier and compute the mean of "
  "DepDelayMin. @carrier[name] where \"name\" is the carrier's name as it appears in the data.",
  {"carrier": F.groupby("Carrier")["DepDelayMin"].mean().idxmax()})
q("t14", "bike_rentals.csv", "easy", "single_statistic",
  "¿Cuál es la media de la humedad (humidity_pct)? Redondee a dos decimales. @media_humedad[valor] donde "
  "\"valor\" es un número redondeado a dos decimales.",
  {"media_humedad": B["humidity_pct"].mean()}, 2)
q("t15", "bike_rentals.csv", "easy", "correlation",
  "Calcule el coeficiente de correlación de Pearson entre temp_c y humidity_pct. @r[valor] donde valor "
  "está redondeado a tres decimales.",
  {"r": st.pearsonr(B["temp_c"], B["humidity_pct"])[0]}, 3)
q("t16", "flights.csv", "easy", "single_statistic",
  "Calculate the mean load factor. Load Factor % has missing values; ignore them. @mean_load[value] where "
  "\"value\" is rounded to 2 decimal places.",
  {"mean_load": F["Load Factor %"].mean()}, 2)
q("t17", "clinic_visits.csv", "easy", "single_statistic",
  "Calculate the standard deviation of AgeYrs, using the formula sqrt(sum((x_i - mean)^2) / (n - 1)) for "
  "i from 1 to n. @std_age[value] where value is rounded to 2 decimal places.",
  {"std_age": C["AgeYrs"].std(ddof=1)}, 2)
q("t18", "bike_rentals.csv", "medium", "distribution",
  "Calculate the skewness of the rentals column using scipy.stats.skew with its default parameters. "
  "@skewness[value] where value is rounded to 2 decimals.",
  {"skewness": st.skew(B["rentals"])}, 2)
z = (F["DepDelayMin"] - F["DepDelayMin"].mean()) / F["DepDelayMin"].std()
q("t19", "flights.csv", "medium", "outliers",
  "How many flights have a DepDelayMin whose z-score is above 3 in absolute value? The z-score is (x minus "
  "the mean) divided by the standard deviation. @outlier_count[count] where count is an integer.",
  {"outlier_count": int((z.abs() > 3).sum())}, 0)
q("t20", "flights.csv", "medium", "count_filter",
  "What is the mean of SeatsSold for Aerolux flights only? @mean_seats_aerolux[value] where value is "
  "rounded to 2 decimal places.",
  {"mean_seats_aerolux": F.loc[F["Carrier"] == "Aerolux", "SeatsSold"].mean()}, 2)
q("t21", "flights.csv", "medium", "group",
  "Compute the mean distance per carrier and report the carrier with the lowest mean distance. "
  "@carrier[name] where name is a string.",
  {"carrier": F.groupby("Carrier")["Distance km"].mean().idxmin()})
q("t22", "clinic_visits.csv", "easy", "single_statistic",
  "Find the minimum value of Systolic BP across all visits. @min_sbp[value] where value is an integer.",
  {"min_sbp": C["Systolic BP"].min()}, 0)
q("t23", "clinic_visits.csv", "easy", "correlation",
  "Calculate Kendall's tau correlation between AgeYrs and CholTotal. @tau[value] where value is rounded "
  "to 3 decimal places.",
  {"tau": st.kendalltau(C["AgeYrs"], C["CholTotal"])[0]}, 3)
q("t24", "bike_rentals.csv", "easy", "single_statistic",
  "Calculate the variance of temp_c. Use the unbiased estimator (divide by n - 1). @variance[value] "
  "where value is a number rounded to 2 decimal places.",
  {"variance": B["temp_c"].var(ddof=1)}, 2)
q("t25", "flights.csv", "easy", "correlation",
  "What is the correlation between Distance km and DepDelayMin? Use the Pearson method. Report only the "
  "coefficient. @corr[value] where value is a number between -1 and 1 rounded to 2 decimal places.",
  {"corr": F["Distance km"].corr(F["DepDelayMin"])}, 2)
q("t26", "clinic_visits.csv", "easy", "single_statistic",
  "Compute the average cholesterol (CholTotal) of patients who smoke (Smoker is Yes). Return all of the "
  "values rounded to 1 decimal. @mean_chol_smokers[value]",
  {"mean_chol_smokers": C.loc[C["Smoker"] == "Yes", "CholTotal"].mean()}, 1)

with open(os.path.join(HERE, "questions.jsonl"), "w") as f:
    for x in Q:
        f.write(json.dumps(x, ensure_ascii=False) + "\n")
print(len(Q), "questions")
