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
     ("flights.csv", "clinic_visits.csv", "bike_rentals.csv", "staff_roster.csv",
      "used_cars.csv", "air_quality.csv", "hotel_bookings.csv", "crop_fields.csv",
      "house_sales.csv", "weather_aus.csv")}
F, C, B = T["flights.csv"], T["clinic_visits.csv"], T["bike_rentals.csv"]
S = T["staff_roster.csv"]
U = T["used_cars.csv"]
A = T["air_quality.csv"]
H = T["hotel_bookings.csv"]
K = T["crop_fields.csv"]
HS = T["house_sales.csv"]
W = T["weather_aus.csv"]
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

q("t27", "flights.csv", "easy", "single_statistic",
  "Compute the average of DepDelayMin. The mean is defined as (1/n) \u03a3 x_i for i = 1 to n, where n is the "
  "number of flights. Only consider non-null values. @avg_delay[value] where value is rounded to 2 decimals.",
  {"avg_delay": F["DepDelayMin"].mean()}, 2)
q("t28", "clinic_visits.csv", "easy", "single_statistic",
  "Find the population standard deviation of CholTotal. Use the formula \u03c3 = sqrt(\u03a3(x_i minus \u03bc)^2 / N). "
  "@sigma_chol[value] where value is a number rounded to three decimal places.",
  {"sigma_chol": C["CholTotal"].std(ddof=0)}, 3)
q("t29", "bike_rentals.csv", "easy", "single_statistic",
  "Calculate the median of humidity_pct using numpy's median function. Do not round intermediate results. "
  "@median_humidity[value] where value is rounded to one decimal place.",
  {"median_humidity": B["humidity_pct"].median()}, 1)
q("t30", "flights.csv", "easy", "single_statistic",
  "What is the mean number of seats sold per flight? Use all rows of the dataset. The answer should be "
  "rounded to 2 decimal places. @mean_seats[value]",
  {"mean_seats": F["SeatsSold"].mean()}, 2)
q("t31", "clinic_visits.csv", "easy", "correlation",
  "Calculate the Pearson correlation coefficient between BMI and CholTotal. Exclude rows where either "
  "value is missing. @r_bmi_chol[r] where r is a number between -1 and 1 rounded to 3 decimal places.",
  {"r_bmi_chol": C[["BMI", "CholTotal"]].dropna().corr().iloc[0, 1]}, 3)
q("t32", "bike_rentals.csv", "easy", "single_statistic",
  "Determine the 90th percentile of temp_c with numpy.percentile (linear interpolation). "
  "@p90_temp[value] where value is a float rounded to two decimals.",
  {"p90_temp": B["temp_c"].quantile(0.9)}, 2)
q("t33", "flights.csv", "easy", "single_statistic",
  "Calcule la desviaci\u00f3n est\u00e1ndar muestral de SeatsSold con pandas. @desv_asientos[valor] donde valor es "
  "un n\u00famero redondeado a dos decimales.",
  {"desv_asientos": F["SeatsSold"].std(ddof=1)}, 2)
q("t34", "clinic_visits.csv", "easy", "single_statistic",
  "What is the range of AgeYrs (maximum minus minimum)? @age_range[value] where value is an integer.",
  {"age_range": C["AgeYrs"].max() - C["AgeYrs"].min()}, 0)
q("t35", "bike_rentals.csv", "easy", "correlation",
  "Is the number of rentals correlated with the temperature (temp_c)? Compute Pearson's r with "
  "scipy.stats.pearsonr and report r and the two-sided p-value. @r[r_value] @p[p_value] where r_value is "
  "rounded to 2 decimals and p_value is rounded to 4 decimals.",
  {"r": st.pearsonr(B["rentals"], B["temp_c"])[0]}, 2)
q("t36", "flights.csv", "easy", "single_statistic",
  "Calculate the variance of Distance km. Note: use the sample variance, i.e. divide by n - 1 where n is "
  "the number of observations. @var_dist[value] where value is rounded to 2 decimal places.",
  {"var_dist": F["Distance km"].var(ddof=1)}, 2)

q("t37", "flights.csv", "medium", "derived",
  "Create a new column SeatsPerKm defined as SeatsSold divided by Distance km, then compute its mean. "
  "@mean_seats_per_km[value] where value is rounded to 4 decimal places.",
  {"mean_seats_per_km": (F["SeatsSold"] / F["Distance km"]).mean()}, 4)
q("t38", "clinic_visits.csv", "medium", "count_filter",
  "How many patients are older than 60 and are smokers (Smoker is Yes)? @count[n] where n is an integer.",
  {"count": int(((C["AgeYrs"] > 60) & (C["Smoker"] == "Yes")).sum())}, 0)
q("t39", "bike_rentals.csv", "medium", "count_filter",
  "What is the mean of rentals on holidays (holiday equals 1)? @mean_rentals_holiday[value] where value is "
  "rounded to 2 decimal places.",
  {"mean_rentals_holiday": B.loc[B["holiday"] == 1, "rentals"].mean()}, 2)
g = B.groupby("season")["rentals"].mean()
q("t40", "bike_rentals.csv", "medium", "group",
  "For each season, compute the mean rentals. Which season has the highest mean? @season[name] where name "
  "is a string.",
  {"season": g.idxmax()})
s = C["CholTotal"]
q1, q3 = s.quantile(0.25), s.quantile(0.75)
q("t41", "clinic_visits.csv", "medium", "outliers",
  "Using the IQR method (values below Q1 - 1.5*IQR or above Q3 + 1.5*IQR), how many outliers are there in "
  "CholTotal? @outliers[count] where count is an integer.",
  {"outliers": int(((s < q1 - 1.5 * (q3 - q1)) | (s > q3 + 1.5 * (q3 - q1))).sum())}, 0)
q("t42", "clinic_visits.csv", "medium", "distribution",
  "Perform a Shapiro-Wilk test of normality on BMI (missing values dropped). Report the p-value. "
  "@p_value[p] where p is rounded to 4 decimal places.",
  {"p_value": st.shapiro(C["BMI"].dropna())[1]}, 4)
q("t43", "flights.csv", "medium", "distribution",
  "Calculate the kurtosis of DepDelayMin (Fisher's definition, as pandas computes it). @kurt[value] where "
  "value is rounded to 2 decimals.",
  {"kurt": F["DepDelayMin"].kurt()}, 2)
q("t44", "bike_rentals.csv", "medium", "group",
  "\u00bfQu\u00e9 estaci\u00f3n (station_name) tiene el menor promedio de rentals? @estacion[nombre] donde nombre es "
  "el nombre de la estaci\u00f3n.",
  {"estacion": B.groupby("station_name")["rentals"].mean().idxmin()})

q("t45", "flights.csv", "medium", "count_filter",
  "How many flights had a departure delay greater than 30 minutes? Consider only flights operated by "
  "BlueJet. @n_delayed[count] where count is an integer.",
  {"n_delayed": int(((F["DepDelayMin"] > 30) & (F["Carrier"] == "BlueJet")).sum())}, 0)
q("t46", "clinic_visits.csv", "easy", "count_filter",
  "Count the patients whose BMI is missing. @missing_bmi[count] where count is an integer.",
  {"missing_bmi": int(C["BMI"].isna().sum())}, 0)
lf = F.groupby("Carrier")["Load Factor %"].mean()
q("t47", "flights.csv", "medium", "group",
  "Calculate the average Load Factor % for each Carrier. Report the carrier with the highest average and "
  "its value. @top_carrier[carrier_name] @top_load[value] where carrier_name is a string and value is "
  "rounded to 2 decimals.",
  {"top_carrier": lf.idxmax(), "top_load": round(lf.max(), 2)})
Q[-1]["tolerance"]["top_load"] = 0.01
zr = (B["rentals"] - B["rentals"].mean()) / B["rentals"].std()
q("t48", "bike_rentals.csv", "medium", "outliers",
  "Identify outliers in rentals using the z-score method with a threshold of 2.5 (|z| > 2.5). How many "
  "are there? @n_outliers[count] where count is an integer.",
  {"n_outliers": int((zr.abs() > 2.5).sum())}, 0)
w = F[F["IsWeekend"] == 1]
q("t49", "flights.csv", "medium", "group",
  "Among weekend flights (IsWeekend = 1), which carrier has the lowest mean DepDelayMin? @carrier[name] "
  "where name is a string.",
  {"carrier": w.groupby("Carrier")["DepDelayMin"].mean().idxmin()})
q("t50", "bike_rentals.csv", "medium", "count_filter",
  "How many records are in summer? Only count rows where holiday is 0. @count[n] where n is an integer.",
  {"count": int(((B["season"] == "summer") & (B["holiday"] == 0)).sum())}, 0)

# t51-t66: single statistics and correlations in the forms public ticket sets use (two
# statistics in one ask, a relationship type decided by stated rules, a filter, a fill).
q("t51", "flights.csv", "easy", "single_statistic",
  "Calculate the mean and standard deviation of SeatsSold. Use the sample standard deviation. "
  "@mean_seats[mean] @std_seats[std] where \"mean\" and \"std\" are numbers rounded to two decimal places.",
  {"mean_seats": F["SeatsSold"].mean(), "std_seats": F["SeatsSold"].std()}, 2)
r, p = st.pearsonr(F["Distance km"], F["SeatsSold"])
rel = "linear" if p < 0.05 and abs(r) >= 0.5 else ("nonlinear" if p < 0.05 else "none")
q("t52", "flights.csv", "medium", "correlation",
  "Is there a correlation between Distance km and SeatsSold? Calculate the Pearson correlation coefficient "
  "(r) to assess the strength and direction of the linear relationship. Assess the significance of the "
  "correlation using a two-tailed test with a significance level (alpha) of 0.05. Report the p-value. "
  "Consider the relationship to be linear if the p-value is less than 0.05 and the absolute value of r is "
  "greater than or equal to 0.5. Consider the relationship to be nonlinear if the p-value is less than 0.05 "
  "and the absolute value of r is less than 0.5. If the p-value is greater than or equal to 0.05, report "
  "that there is no significant correlation. @correlation_coefficient[r_value] @p_value[p_value] "
  "@relationship_type[relationship_type] where \"r_value\" is a number between -1 and 1, rounded to two "
  "decimal places, \"p_value\" is a number between 0 and 1, rounded to four decimal places, and "
  "\"relationship_type\" is a string that can either be \"linear\", \"nonlinear\", or \"none\".",
  {"correlation_coefficient": round(r, 2), "p_value": round(p, 4), "relationship_type": rel})
Q[-1]["tolerance"] = {"correlation_coefficient": 0.01, "p_value": 0.0001, "relationship_type": 0}
q("t53", "clinic_visits.csv", "easy", "single_statistic",
  "Calculate the skewness of CholTotal. Use pandas' skew(). @skewness[value] where \"value\" is rounded "
  "to two decimal places.",
  {"skewness": C["CholTotal"].skew()}, 2)
q("t54", "bike_rentals.csv", "easy", "single_statistic",
  "How many unique values does station_name have? @unique_stations[count] where count is an integer.",
  {"unique_stations": int(B["station_name"].nunique())}, 0)
q("t55", "clinic_visits.csv", "easy", "single_statistic",
  "What is the range (maximum minus minimum) of Systolic BP? @range_bp[value] where value is an integer.",
  {"range_bp": int(C["Systolic BP"].max() - C["Systolic BP"].min())}, 0)
q("t56", "flights.csv", "medium", "single_statistic",
  "Compute the mean DepDelayMin for flights operated by Corvair only. @mean_delay_corvair[value] where "
  "value is rounded to two decimal places.",
  {"mean_delay_corvair": F.loc[F["Carrier"] == "Corvair", "DepDelayMin"].mean()}, 2)
q("t57", "clinic_visits.csv", "medium", "single_statistic",
  "Fill the missing values of BMI with the mean of BMI, then calculate the standard deviation of BMI. "
  "@std_bmi[value] where value is rounded to 3 decimal places.",
  {"std_bmi": C["BMI"].fillna(C["BMI"].mean()).std()}, 3)
r, p = st.pearsonr(B["humidity_pct"], B["rentals"])
q("t58", "bike_rentals.csv", "easy", "correlation",
  "Calculate the Pearson correlation coefficient between humidity_pct and rentals. "
  "@correlation[r] where r is rounded to 3 decimal places.",
  {"correlation": r}, 3)
q("t59", "flights.csv", "easy", "single_statistic",
  "What is the maximum value of Load Factor %? @max_load[value] where value is rounded to one decimal.",
  {"max_load": F["Load Factor %"].max()}, 1)
q("t60", "clinic_visits.csv", "easy", "single_statistic",
  "Calculate the coefficient of variation (standard deviation divided by the mean) of CholTotal. "
  "@cv[value] where value is rounded to 4 decimal places.",
  {"cv": C["CholTotal"].std() / C["CholTotal"].mean()}, 4)
q("t61", "bike_rentals.csv", "easy", "single_statistic",
  "What is the most frequent season in the data? @mode_season[season] where season is a string.",
  {"mode_season": B["season"].mode()[0]})
q("t62", "flights.csv", "easy", "single_statistic",
  "Calculate the 90th percentile of Distance km. @p90[value] where value is rounded to 2 decimal places.",
  {"p90": F["Distance km"].quantile(0.9)}, 2)
r, p = st.pearsonr(C["BMI"].dropna(), C.loc[C["BMI"].notna(), "CholTotal"])
q("t63", "clinic_visits.csv", "medium", "correlation",
  "What is the Pearson correlation between BMI and CholTotal? Rows with a missing BMI are dropped before "
  "the calculation. Also report the p-value. @r[value] @p_value[p] where value is rounded to 2 decimals "
  "and p to 4 decimals.",
  {"r": round(r, 2), "p_value": round(p, 4)})
Q[-1]["tolerance"] = {"r": 0.01, "p_value": 0.0001}
q("t64", "bike_rentals.csv", "easy", "single_statistic",
  "Calculate the average number of rentals per record. Round the result to the nearest whole number. "
  "@avg_rentals[value] where value is an integer.",
  {"avg_rentals": int(round(B["rentals"].mean()))}, 0)
q("t65", "flights.csv", "easy", "single_statistic",
  "Calculate the sum of SeatsSold over all flights in Month 3. @total_seats[value] where value is an integer.",
  {"total_seats": int(F.loc[F["Month"] == 3, "SeatsSold"].sum())}, 0)
r = C["AgeYrs"].corr(C["CholTotal"], method="spearman")
q("t66", "clinic_visits.csv", "easy", "correlation",
  "Using pandas' corr with method='spearman', find the correlation between AgeYrs and CholTotal. "
  "@spearman[value] where value is rounded to 2 decimals.",
  {"spearman": r}, 2)

# t67-t80: counts under conditions, groups, outliers and derived columns, phrased as
# tickets phrase them (conditions in a second sentence, "per", "whose", "at least").
q("t67", "flights.csv", "easy", "count_filter",
  "How many flights were operated on weekends? IsWeekend equals 1 for a weekend flight. @weekend_flights[count] "
  "where count is an integer.",
  {"weekend_flights": int((F["IsWeekend"] == 1).sum())}, 0)
q("t68", "clinic_visits.csv", "medium", "count_filter",
  "How many patients are smokers with a Systolic BP of at least 140? @n[count] where count is an integer.",
  {"n": int(((C["Smoker"] == "Yes") & (C["Systolic BP"] >= 140)).sum())}, 0)
q("t69", "bike_rentals.csv", "medium", "count_filter",
  "Count the records with more than 150 rentals in winter. @count_winter[n] where n is an integer.",
  {"count_winter": int(((B["rentals"] > 150) & (B["season"] == "winter")).sum())}, 0)
g = F.groupby("Month")["SeatsSold"].sum()
q("t70", "flights.csv", "medium", "group",
  "Group the flights by Month and sum SeatsSold. Which month has the largest total? @month[m] where m is an "
  "integer.",
  {"month": int(g.idxmax())}, 0)
g = C.groupby("Smoker")["CholTotal"].mean()
q("t71", "clinic_visits.csv", "medium", "group",
  "What is the mean CholTotal of smokers and of non-smokers? @mean_smokers[a] @mean_non_smokers[b] where a and b "
  "are rounded to 2 decimal places.",
  {"mean_smokers": g["Yes"], "mean_non_smokers": g["No"]}, 2)
s_ = F["SeatsSold"]
q1_, q3_ = s_.quantile(0.25), s_.quantile(0.75)
q("t72", "flights.csv", "medium", "outliers",
  "Detect outliers in SeatsSold with the IQR rule (1.5 times the interquartile range beyond the quartiles). "
  "Report how many there are. @outlier_count[n] where n is an integer.",
  {"outlier_count": int(((s_ < q1_ - 1.5 * (q3_ - q1_)) | (s_ > q3_ + 1.5 * (q3_ - q1_))).sum())}, 0)
q("t73", "bike_rentals.csv", "easy", "count_filter",
  "What percentage of records are holidays (holiday = 1)? @holiday_pct[p] where p is rounded to 2 decimals.",
  {"holiday_pct": 100 * (B["holiday"] == 1).mean()}, 2)
q("t74", "flights.csv", "medium", "derived",
  "Create a column with the number of empty seats assuming 220 seats per flight (220 minus SeatsSold). What is "
  "its mean? @mean_empty[v] where v is rounded to 2 decimals.",
  {"mean_empty": (220 - F["SeatsSold"]).mean()}, 2)
g = B.groupby("station_name")["rentals"].sum()
q("t75", "bike_rentals.csv", "easy", "group",
  "Which station_name has the highest total rentals? @top_station[name] where name is a string.",
  {"top_station": g.idxmax()})
q("t76", "clinic_visits.csv", "medium", "count_filter",
  "How many patients older than 60 have a BMI above 30? Patients with a missing BMI are not counted. "
  "@n_obese_older[count] where count is an integer.",
  {"n_obese_older": int(((C["AgeYrs"] > 60) & (C["BMI"] > 30)).sum())}, 0)
g = F.groupby("Carrier")["DepDelayMin"].median()
q("t77", "flights.csv", "medium", "group",
  "Compute the median departure delay per carrier and report the carrier with the smallest median. "
  "@carrier[name] where name is a string.",
  {"carrier": g.idxmin()})
q("t78", "bike_rentals.csv", "medium", "count_filter",
  "How many days had a temperature below 0 degrees (temp_c < 0)? @freezing_days[n] where n is an integer.",
  {"freezing_days": int((B["temp_c"] < 0).sum())}, 0)
q("t79", "clinic_visits.csv", "easy", "single_statistic",
  "What is the average age (AgeYrs) of the non-smoking patients? @avg_age[v] where v is rounded to 1 decimal.",
  {"avg_age": C.loc[C["Smoker"] == "No", "AgeYrs"].mean()}, 1)
q("t80", "flights.csv", "easy", "count_filter",
  "How many flights have a Load Factor % of 90 or more? Ignore flights where it is missing. @high_load[n] where "
  "n is an integer.",
  {"high_load": int((F["Load Factor %"] >= 90).sum())}, 0)

# t81-t95: the same kinds with the boilerplate third-party tickets carry (how to load the
# file, which module, "rounding off", "non-null values", "for the entire dataset").
q("t81", "flights.csv", "easy", "single_statistic",
  "Calculate the mean number of seats sold per flight. Constraints: Calculate the mean using Python's built-in "
  "statistics module or an appropriate statistical method in pandas. Rounding off the answer to two decimal "
  "places. @mean_seats[mean] where \"mean\" is a float rounded to two decimal places.",
  {"mean_seats": F["SeatsSold"].mean()}, 2)
q("t82", "clinic_visits.csv", "easy", "single_statistic",
  "What is the median of the BMI column? Load the dataset with pandas, consider only the non-null values of BMI "
  "and compute the median for the entire dataset. @median_bmi[value] where value is a number with one decimal.",
  {"median_bmi": C["BMI"].median()}, 1)
q("t83", "bike_rentals.csv", "easy", "single_statistic",
  "Find the standard deviation of the temperature (temp_c). Use the pandas std() function with its default "
  "parameters. The answer should be rounded off to three decimal places. @std_temp[std] where std is a float.",
  {"std_temp": B["temp_c"].std()}, 3)
r, p = st.pearsonr(F["DepDelayMin"], F["SeatsSold"])
q("t84", "flights.csv", "easy", "correlation",
  "Calculate the correlation coefficient between departure delay and seats sold. Constraints: Use the Pearson "
  "correlation coefficient method to calculate the correlation. Read the csv file using pandas and drop rows "
  "with null values in either column before computing. @correlation_coefficient[r_value] where \"r_value\" is "
  "a number between -1 and 1, rounded to two decimal places.",
  {"correlation_coefficient": r}, 2)
q("t85", "clinic_visits.csv", "easy", "single_statistic",
  "Determine the maximum total cholesterol recorded in the data. Use pandas to find the maximum value of the "
  "CholTotal column. @max_chol[value] where value is an integer.",
  {"max_chol": int(C["CholTotal"].max())}, 0)
q("t86", "bike_rentals.csv", "easy", "single_statistic",
  "What is the variance of humidity_pct? Constraints: Compute the sample variance using pandas' var() method. "
  "Round your answer to 2 decimal places. @var_humidity[variance] where variance is a number.",
  {"var_humidity": B["humidity_pct"].var()}, 2)
r = st.spearmanr(C["AgeYrs"], C["Systolic BP"])[0]
q("t87", "clinic_visits.csv", "easy", "correlation",
  "Is age related to systolic blood pressure? Measure the strength of the monotonic relationship between "
  "AgeYrs and Systolic BP with Spearman's rank correlation coefficient. @rho[value] where value is rounded "
  "to 3 decimal places.",
  {"rho": r}, 3)
q("t88", "flights.csv", "easy", "single_statistic",
  "Calculate the average flight distance in kilometres. Constraints: The average should be the arithmetic mean "
  "of the Distance km column for all flights in the dataset, and the result should be rounded to 1 decimal "
  "place. @avg_distance[value] where value is a float.",
  {"avg_distance": F["Distance km"].mean()}, 1)
q("t89", "bike_rentals.csv", "easy", "single_statistic",
  "How many distinct seasons are in the dataset? Use the nunique() function of pandas. @n_seasons[count] where "
  "count is an integer.",
  {"n_seasons": int(B["season"].nunique())}, 0)
r, p = st.pearsonr(B["temp_c"], B["humidity_pct"])
q("t90", "bike_rentals.csv", "medium", "correlation",
  "Check whether temp_c and humidity_pct are correlated. Compute the Pearson correlation coefficient and the "
  "two-tailed p-value with scipy. Use a significance level of 0.05. @r[r] @p[p] where r is rounded to 3 "
  "decimals and p to 4 decimals.",
  {"r": round(r, 3), "p": round(p, 4)})
Q[-1]["tolerance"] = {"r": 0.001, "p": 0.0001}
q("t91", "clinic_visits.csv", "easy", "single_statistic",
  "Calculate the 25th percentile (first quartile) of Systolic BP. Use numpy's percentile function with the "
  "default linear method. @q1_bp[value] where value is rounded to 2 decimals.",
  {"q1_bp": C["Systolic BP"].quantile(0.25)}, 2)
q("t92", "flights.csv", "easy", "single_statistic",
  "Compute the minimum departure delay. Negative values mean the flight left early. @min_delay[value] where "
  "value is an integer.",
  {"min_delay": int(F["DepDelayMin"].min())}, 0)
q("t93", "bike_rentals.csv", "easy", "single_statistic",
  "Calculate the skewness of the rentals distribution using scipy.stats.skew with default parameters. "
  "@skew_rentals[value] where value is rounded to 3 decimal places.",
  {"skew_rentals": st.skew(B["rentals"])}, 3)
q("t94", "clinic_visits.csv", "easy", "single_statistic",
  "What is the mean age of the patients? Constraints: Use the AgeYrs column. Do not round intermediate "
  "results; round the final answer to 2 decimal places. @mean_age[value] where value is a float.",
  {"mean_age": C["AgeYrs"].mean()}, 2)
q("t95", "flights.csv", "easy", "single_statistic",
  "Calculate the total number of seats sold. Sum the values of the SeatsSold column over all rows of the file. "
  "@total_seats[sum] where sum is an integer.",
  {"total_seats": int(F["SeatsSold"].sum())}, 0)

# t96-t107: a table whose columns are abbreviated (skeletons, prefixes, acronyms), asked
# about in full words.
q("t96", "staff_roster.csv", "easy", "single_statistic",
  "What is the average annual salary of the employees? @mean_salary[value] where value is rounded to 2 "
  "decimal places.",
  {"mean_salary": S["AnnSal"].mean()}, 2)
q("t97", "staff_roster.csv", "easy", "single_statistic",
  "Calculate the median years of service. @median_years[value] where value is rounded to 1 decimal.",
  {"median_years": S["YrsSvc"].median()}, 1)
q("t98", "staff_roster.csv", "easy", "single_statistic",
  "What is the standard deviation of training hours? Use the sample standard deviation. @std_training[v] "
  "where v is rounded to 3 decimals.",
  {"std_training": S["TrngHrs"].std()}, 3)
r, p = st.pearsonr(S["YrsSvc"], S["AnnSal"])
q("t99", "staff_roster.csv", "easy", "correlation",
  "Calculate the Pearson correlation between years of service and annual salary. @r[value] where value is "
  "rounded to 2 decimals.",
  {"r": r}, 2)
q("t100", "staff_roster.csv", "easy", "single_statistic",
  "What is the mean KPI score? Ignore missing values. @mean_kpi[value] where value is rounded to 2 decimals.",
  {"mean_kpi": S["KPIScore"].mean()}, 2)
q("t101", "staff_roster.csv", "easy", "single_statistic",
  "What is the maximum employee age? @max_age[value] where value is an integer.",
  {"max_age": int(S["EmpAge"].max())}, 0)
g = S.groupby("Dept")["AnnSal"].mean()
q("t102", "staff_roster.csv", "medium", "group",
  "Which department has the highest mean annual salary? @department[name] where name is a string.",
  {"department": g.idxmax()})
q("t103", "staff_roster.csv", "easy", "count_filter",
  "How many employees are managers (IsMgr = 1)? @n_managers[count] where count is an integer.",
  {"n_managers": int((S["IsMgr"] == 1).sum())}, 0)
r = st.spearmanr(S["TrngHrs"], S["KPIScore"], nan_policy="omit")[0]
q("t104", "staff_roster.csv", "medium", "correlation",
  "Compute the Spearman correlation between training hours and the KPI score, dropping rows where the KPI "
  "score is missing. @rho[value] where value is rounded to 3 decimals.",
  {"rho": r}, 3)
q("t105", "staff_roster.csv", "easy", "single_statistic",
  "What is the total full-time equivalent (FTE) of the staff? @total_fte[value] where value is rounded to 1 "
  "decimal.",
  {"total_fte": S["FTE"].sum()}, 1)
q("t106", "staff_roster.csv", "medium", "single_statistic",
  "What is the mean annual salary of employees in the Finance department? @mean_sal_fin[v] where v is rounded "
  "to 2 decimals.",
  {"mean_sal_fin": S.loc[S["Dept"] == "Finance", "AnnSal"].mean()}, 2)
q("t107", "staff_roster.csv", "easy", "single_statistic",
  "Find the variance of the employees' ages (population variance). @var_age[v] where v is rounded to 2 "
  "decimals.",
  {"var_age": S["EmpAge"].var(ddof=0)}, 2)

# Round r9: a fifth table (used_cars.csv), questions written before the changes they
# measure, worded the way tickets word them.
q("t108", "used_cars.csv", "easy", "single_statistic",
  "Calculate the average listing price of the cars. Use the arithmetic mean and skip missing prices. "
  "@avg_price[value] where value is rounded to 2 decimals.",
  {"avg_price": U["price_usd"].mean()}, 2)
q("t109", "used_cars.csv", "easy", "single_statistic",
  "What is the median odometer reading (km)? @median_km[value] where value is rounded to 1 decimal.",
  {"median_km": U["odometer_km"].median()}, 1)
r, p = st.pearsonr(U.dropna(subset=["price_usd"])["odometer_km"], U.dropna(subset=["price_usd"])["price_usd"])
q("t110", "used_cars.csv", "easy", "correlation",
  "Is there a linear relationship between the odometer reading and the price? Calculate the Pearson "
  "correlation coefficient (r) between odometer_km and price_usd, ignoring rows with a missing price. "
  "@r[value] where value is rounded to 3 decimals.",
  {"r": r}, 3)
q("t111", "used_cars.csv", "easy", "single_statistic",
  "What is the standard deviation of the engine size in litres? Electric cars have no engine size; leave them "
  "out. Use the sample standard deviation. @sd_engine[value] where value is rounded to 3 decimals.",
  {"sd_engine": U["engine_l"].std()}, 3)
q("t112", "used_cars.csv", "easy", "count_filter",
  "How many cars have had more than two owners? @n_cars[count] where count is an integer.",
  {"n_cars": int((U["owners"] > 2).sum())}, 0)
g = U.groupby("make")["price_usd"].mean()
q("t113", "used_cars.csv", "medium", "group",
  "Which make has the lowest average price? @make[name] where name is a string.",
  {"make": g.idxmin()})
q("t114", "used_cars.csv", "easy", "single_statistic",
  "What is the total distance on the odometers of all diesel cars? @total_km[value] where value is an integer.",
  {"total_km": int(U.loc[U["fuel"] == "diesel", "odometer_km"].sum())}, 0)
q("t115", "used_cars.csv", "medium", "single_statistic",
  "What percentage of the cars have an accident history? Give a number between 0 and 100. "
  "@pct_accident[value] where value is rounded to 1 decimal.",
  {"pct_accident": (U["accident_history"] == "Yes").mean() * 100}, 1)
q("t116", "used_cars.csv", "easy", "single_statistic",
  "Find the range of the model years (the newest minus the oldest). @year_range[value] where value is an "
  "integer.",
  {"year_range": int(U["model_year"].max() - U["model_year"].min())}, 0)
a = U[U["transmission"] == "automatic"].dropna(subset=["price_usd"])
q("t117", "used_cars.csv", "medium", "correlation",
  "For automatic cars only, calculate the Spearman rank correlation between model year and price. "
  "@rho[value] where value is rounded to 3 decimals.",
  {"rho": st.spearmanr(a["model_year"], a["price_usd"])[0]}, 3)
q("t118", "used_cars.csv", "easy", "single_statistic",
  "What is the mean price of cars with a model year of 2018 or later? @mean_recent[value] where value is "
  "rounded to 2 decimals.",
  {"mean_recent": U.loc[U["model_year"] >= 2018, "price_usd"].mean()}, 2)
q("t119", "used_cars.csv", "medium", "single_statistic",
  "Compute the skewness of the price distribution (scipy.stats.skew with default settings, missing prices "
  "removed first). @skew_price[value] where value is rounded to 3 decimals.",
  {"skew_price": st.skew(U["price_usd"].dropna())}, 3)
pr = U["price_usd"].dropna()
q1, q3 = pr.quantile(0.25), pr.quantile(0.75)
q("t120", "used_cars.csv", "medium", "outliers",
  "Using the IQR method (values below Q1 - 1.5*IQR or above Q3 + 1.5*IQR), how many outliers are there in "
  "price_usd? @n_outliers[count] where count is an integer.",
  {"n_outliers": int(((pr < q1 - 1.5 * (q3 - q1)) | (pr > q3 + 1.5 * (q3 - q1))).sum())}, 0)
q("t121", "used_cars.csv", "easy", "single_statistic",
  "What is the 90th percentile of odometer_km? Use linear interpolation (numpy's default). @p90_km[value] "
  "where value is rounded to 1 decimal.",
  {"p90_km": np.percentile(U["odometer_km"], 90)}, 1)
q("t122", "used_cars.csv", "easy", "single_statistic",
  "On average, how many owners has a car had? @mean_owners[value] where value is rounded to 2 decimals.",
  {"mean_owners": U["owners"].mean()}, 2)
q("t123", "used_cars.csv", "medium", "derived",
  "Create a new column age = 2024 - model_year. What is the mean age of the cars? @mean_age[value] where value "
  "is rounded to 2 decimals.",
  {"mean_age": (2024 - U["model_year"]).mean()}, 2)
q("t124", "used_cars.csv", "easy", "count_filter",
  "How many distinct car makes appear in the data? @n_makes[count] where count is an integer.",
  {"n_makes": int(U["make"].nunique())}, 0)
e = U.dropna(subset=["engine_l", "price_usd"])
q("t125", "used_cars.csv", "easy", "correlation",
  "What is the correlation between engine size and price? Use Pearson's method and ignore rows with missing "
  "values. @corr[value] where value is rounded to 2 decimals.",
  {"corr": e["engine_l"].corr(e["price_usd"])}, 2)
q("t126", "used_cars.csv", "medium", "single_statistic",
  "Calculate the kurtosis of the odometer readings (Fisher's definition, as pandas' .kurt() computes it). "
  "@kurt_km[value] where value is rounded to 3 decimals.",
  {"kurt_km": U["odometer_km"].kurt()}, 3)
q("t127", "used_cars.csv", "medium", "single_statistic",
  "What is the median price of hybrid cars with no accident history? @median_price[value] where value is "
  "rounded to 2 decimals.",
  {"median_price": U.loc[(U["fuel"] == "hybrid") & (U["accident_history"] == "No"), "price_usd"].median()}, 2)
q("t128", "used_cars.csv", "easy", "single_statistic",
  "What's the lowest price among cars with a manual transmission? @min_price[value] where value is rounded to "
  "2 decimals.",
  {"min_price": U.loc[U["transmission"] == "manual", "price_usd"].min()}, 2)
q("t129", "used_cars.csv", "easy", "single_statistic",
  "Report the mean odometer reading for BMW cars. Round to the nearest whole number. @bmw_km[value] where value "
  "is an integer.",
  {"bmw_km": round(U.loc[U["make"] == "BMW", "odometer_km"].mean())}, 0)
q("t130", "used_cars.csv", "medium", "single_statistic",
  "Among cars listed in March 2024, what is the average price? @mar_price[value] where value is rounded to 2 "
  "decimals.",
  {"mar_price": U.loc[U["listed_on"].str.startswith("2024-03"), "price_usd"].mean()}, 2)

# Round r10: a sixth table (air_quality.csv, 1,460 daily readings of four stations), questions
# written before the changes they measure, in the labelled ticket form ("Constraints:",
# "Format:") and with the method restated in several ways.
q("t131", "air_quality.csv", "easy", "single_statistic",
  "Calculate the mean PM2.5 concentration across all readings. Constraints: Use pandas' mean() function; "
  "readings without a PM2.5 value are excluded. Format: @mean_pm25[mean] where \"mean\" is a float rounded "
  "to 2 decimal places.",
  {"mean_pm25": A["pm25"].mean()}, 2)
q("t132", "air_quality.csv", "easy", "single_statistic",
  "What is the median NO2 level? Constraints: Compute the median with numpy (np.median) over all rows of "
  "the no2 column. Format: @median_no2[value] where \"value\" is a float rounded to 1 decimal place.",
  {"median_no2": np.median(A["no2"])}, 1)
q("t133", "air_quality.csv", "easy", "single_statistic",
  "Compute the standard deviation of the ozone (o3) readings. Constraints: Use the population standard "
  "deviation, i.e. numpy.std with ddof=0. Format: @std_o3[std] where \"std\" is rounded to 3 decimal places.",
  {"std_o3": np.std(A["o3"], ddof=0)}, 3)
r, p = st.pearsonr(A["temp_c"], A["o3"])
q("t134", "air_quality.csv", "medium", "correlation",
  "Is there a linear relationship between the temperature and the ozone level? Calculate the Pearson "
  "correlation coefficient (r) to assess the strength and direction of the linear relationship between "
  "temp_c and o3. Assess the significance of the correlation using a two-tailed test with a significance "
  "level (alpha) of 0.05. Report the p-value associated with the correlation test. Consider the relationship "
  "to be linear if the p-value is less than 0.05 and the absolute value of r is greater than or equal to 0.5. "
  "Consider the relationship to be nonlinear if the p-value is less than 0.05 and the absolute value of r is "
  "less than 0.5. If the p-value is greater than or equal to 0.05, report that there is no significant "
  "correlation. Format: @correlation_coefficient[r_value] @p_value[p_value] @relationship_type[relationship_type] "
  "where \"r_value\" is a number between -1 and 1, rounded to two decimal places. \"p_value\" is a number "
  "between 0 and 1, rounded to four decimal places. \"relationship_type\" is a string that can either be "
  "\"linear\", \"nonlinear\", or \"none\" based on the conditions specified in the constraints.",
  {"correlation_coefficient": round(r, 2), "p_value": round(p, 4),
   "relationship_type": "linear" if p < 0.05 and abs(r) >= 0.5 else "nonlinear" if p < 0.05 else "none"})
Q[-1]["tolerance"] = {"correlation_coefficient": 0.01, "p_value": 0.0001, "relationship_type": 0}
q("t135", "air_quality.csv", "easy", "single_statistic",
  "What is the largest daily rainfall recorded at the North station? Format: @max_rain_north[value] where "
  "value is a float with one decimal.",
  {"max_rain_north": A.loc[A["station"] == "North", "rain_mm"].max()}, 1)
q("t136", "air_quality.csv", "easy", "count_filter",
  "On how many days was PM10 above 50? Count every reading (row) whose pm10 is greater than 50. "
  "Format: @n_days[count] where count is an integer.",
  {"n_days": int((A["pm10"] > 50).sum())}, 0)
q("t137", "air_quality.csv", "easy", "single_statistic",
  "Calculate the mean and the standard deviation of the wind speed. Constraints: Use pandas; the standard "
  "deviation is the sample one. Format: @mean_wind[mean], @std_wind[std] where \"mean\" and \"std\" are "
  "floats rounded to two decimal places.",
  {"mean_wind": A["wind_ms"].mean(), "std_wind": A["wind_ms"].std()}, 2)
q1, q3 = A["pm25"].quantile(0.25), A["pm25"].quantile(0.75)
q("t138", "air_quality.csv", "easy", "single_statistic",
  "What is the interquartile range of pm25? Constraints: IQR = Q3 - Q1, with the quartiles from pandas' "
  "quantile() (linear interpolation), missing values ignored. Format: @iqr_pm25[iqr] where iqr is rounded "
  "to 2 decimals.",
  {"iqr_pm25": q3 - q1}, 2)
q("t139", "air_quality.csv", "easy", "single_statistic",
  "Which air quality category occurs most often? Format: @most_common_category[category] where category is "
  "a string.",
  {"most_common_category": A["category"].mode()[0]})
d = A.dropna(subset=["wind_ms", "pm25"])
q("t140", "air_quality.csv", "easy", "correlation",
  "Compute the Spearman rank correlation coefficient between wind speed and PM2.5. Constraints: Use "
  "scipy.stats.spearmanr and drop the rows with a missing value in either column. Format: @spearman_rho[rho] "
  "where \"rho\" is rounded to 3 decimal places.",
  {"spearman_rho": st.spearmanr(d["wind_ms"], d["pm25"])[0]}, 3)
q("t141", "air_quality.csv", "easy", "single_statistic",
  "What percentage of the readings have no PM2.5 value? Format: @pct_missing_pm25[percentage] where "
  "\"percentage\" is a number between 0 and 100, rounded to two decimal places.",
  {"pct_missing_pm25": A["pm25"].isna().mean() * 100}, 2)
z = (A["no2"] - A["no2"].mean()) / A["no2"].std()
q("t142", "air_quality.csv", "medium", "outliers",
  "Identify outliers in the NO2 column with the Z-score method: a reading is an outlier if the absolute "
  "value of its z-score is greater than 3, where z = (x - mean) / standard deviation (sample standard "
  "deviation). How many outliers are there? Format: @n_outliers[count] where count is an integer.",
  {"n_outliers": int((z.abs() > 3).sum())}, 0)
q("t143", "air_quality.csv", "medium", "group",
  "Which station has the highest average NO2 concentration? Constraints: Group the data by station and "
  "compute the mean of no2 for each group. Format: @station[station_name] where \"station_name\" is a string.",
  {"station": A.groupby("station")["no2"].mean().idxmax()})
q("t144", "air_quality.csv", "medium", "single_statistic",
  "What was the mean temperature in July 2023, over all stations? Format: @mean_temp_july[value] where value "
  "is rounded to 2 decimals.",
  {"mean_temp_july": A.loc[A["date"].str.startswith("2023-07"), "temp_c"].mean()}, 2)
q("t145", "air_quality.csv", "easy", "single_statistic",
  "What is the total rainfall over the whole year at the South station? Constraints: Sum the rain_mm values "
  "of the South station. Format: @total_rain_south[total] where total is rounded to 1 decimal.",
  {"total_rain_south": A.loc[A["station"] == "South", "rain_mm"].sum()}, 1)
q("t146", "air_quality.csv", "medium", "single_statistic",
  "Calculate the skewness of the PM10 distribution. Constraints: Use the skew() method of pandas. "
  "Format: @skew_pm10[skewness] where \"skewness\" is a float rounded to 4 decimal places.",
  {"skew_pm10": A["pm10"].skew()}, 4)
d = A.dropna(subset=["temp_c", "pm25"])
r, p = st.pearsonr(d["temp_c"], d["pm25"])
q("t147", "air_quality.csv", "medium", "correlation",
  "Is there a significant correlation between temperature and PM2.5? Calculate the Pearson correlation "
  "coefficient and the p-value of a two-tailed test, ignoring rows with missing values. Use a significance "
  "level of 0.05. Format: @r[r_value] @p_value[p] where r_value is rounded to 3 decimals and p to 4 decimals.",
  {"r": r, "p_value": p})
Q[-1]["tolerance"] = {"r": 0.001, "p_value": 0.0001}
Q[-1]["answer"] = {"r": round(r, 3), "p_value": round(p, 4)}
q("t148", "air_quality.csv", "easy", "single_statistic",
  "What is the 75th percentile of the ozone concentration? Constraints: Use numpy.percentile with its default "
  "(linear) interpolation. Format: @p75_o3[value] where value is rounded to 2 decimal places.",
  {"p75_o3": np.percentile(A["o3"], 75)}, 2)
q("t149", "air_quality.csv", "easy", "count_filter",
  "How many readings were taken at the East station when the temperature was below 0 degrees Celsius? "
  "Format: @n_cold_east[count] where count is an integer.",
  {"n_cold_east": int(((A["station"] == "East") & (A["temp_c"] < 0)).sum())}, 0)
q("t150", "air_quality.csv", "easy", "single_statistic",
  "Find the minimum ozone reading of the West station. Format: @min_o3_west[value] where value is rounded to "
  "one decimal place.",
  {"min_o3_west": A.loc[A["station"] == "West", "o3"].min()}, 1)
q("t151", "air_quality.csv", "easy", "single_statistic",
  "Calculate the variance of the temperature. Constraints: Use the sample variance (pandas' var() with its "
  "default ddof=1). Format: @var_temp[variance] where \"variance\" is rounded to 3 decimal places.",
  {"var_temp": A["temp_c"].var()}, 3)
q("t152", "air_quality.csv", "medium", "single_statistic",
  "What is the average PM2.5 concentration on days with no rain (rain_mm equal to 0)? Constraints: Only use "
  "the non-null PM2.5 values. Format: @mean_pm25_dry[mean] where mean is rounded to 2 decimals.",
  {"mean_pm25_dry": A.loc[A["rain_mm"] == 0, "pm25"].mean()}, 2)

# r12: a seventh table (hotel bookings) and prompts in the long ticket form, whose
# constraints restate the method at length, written before the round's changes.
q("t153", "hotel_bookings.csv", "easy", "single_statistic",
  "Calculate the mean average daily rate (adr) of all bookings. Constraints: Use the arithmetic mean, i.e. the "
  "sum of all adr values divided by the number of bookings. Include canceled bookings as well. Do not remove "
  "outliers. Format: @mean_adr[mean] where \"mean\" is a float rounded to two decimal places.",
  {"mean_adr": H["adr"].mean()}, 2)
q("t154", "hotel_bookings.csv", "easy", "single_statistic",
  "What is the standard deviation of lead_time? Constraints: Compute the population standard deviation, that "
  "is the square root of the average squared deviation from the mean (ddof=0). Use numpy. Format: "
  "@std_lead_time[value] where value is rounded to 2 decimal places.",
  {"std_lead_time": np.std(H["lead_time"])}, 2)
r, p = st.pearsonr(H["lead_time"], H["adr"])
q("t155", "hotel_bookings.csv", "easy", "correlation",
  "Calculate the Pearson correlation coefficient (r) to assess the strength and direction of the linear "
  "relationship between lead_time and adr. Constraints: Use scipy.stats.pearsonr and report the p-value of "
  "the two-tailed test. Use a significance level of 0.05. Format: @correlation_coefficient[r_value] "
  "@p_value[p_value] where \"r_value\" is a number between -1 and 1, rounded to two decimal places, and "
  "\"p_value\" is a number between 0 and 1, rounded to four decimal places.",
  {"correlation_coefficient": round(r, 2), "p_value": round(p, 4)}, None)
Q[-1]["tolerance"] = {"correlation_coefficient": 0.01, "p_value": 0.0001}
q("t156", "hotel_bookings.csv", "easy", "single_statistic",
  "Find the median number of children per booking. Constraints: Missing values in the children column "
  "should be ignored; do not fill them. Format: @median_children[median] where median is a number rounded "
  "to one decimal place.",
  {"median_children": H["children"].median()}, 1)
q("t157", "hotel_bookings.csv", "easy", "single_statistic",
  "What is the maximum lead time (in days) among all the bookings in the dataset? Format: @max_lead_time[days] "
  "where days is an integer.",
  {"max_lead_time": int(H["lead_time"].max())}, 0)
q("t158", "hotel_bookings.csv", "easy", "single_statistic",
  "Calculate the skewness of the average daily rate. Constraints: Use scipy.stats.skew with its default "
  "parameters (bias=True). Consider every booking. Format: @adr_skewness[skew] where skew is rounded to 3 "
  "decimal places.",
  {"adr_skewness": st.skew(H["adr"])}, 3)
q("t159", "hotel_bookings.csv", "easy", "single_statistic",
  "Compute the kurtosis of lead_time. Constraints: Use Fisher's definition (the kurtosis of a normal "
  "distribution is 0.0), as computed by scipy.stats.kurtosis with default settings. Format: "
  "@lead_time_kurtosis[kurtosis] where kurtosis is rounded to 3 decimal places.",
  {"lead_time_kurtosis": st.kurtosis(H["lead_time"])}, 3)
q("t160", "hotel_bookings.csv", "easy", "single_statistic",
  "What is the 75th percentile of adr? Constraints: Use pandas' quantile function with the default linear "
  "interpolation. Format: @adr_p75[value] where value is rounded to two decimal places.",
  {"adr_p75": H["adr"].quantile(0.75)}, 2)
r, p = st.spearmanr(H["total_of_special_requests"], H["adr"])
q("t161", "hotel_bookings.csv", "easy", "correlation",
  "Is there a monotonic relationship between the total number of special requests and the average daily "
  "rate? Constraints: Calculate Spearman's rank correlation coefficient with scipy.stats.spearmanr. Format: "
  "@spearman_correlation[rho] where rho is rounded to 3 decimals.",
  {"spearman_correlation": r}, 3)
q("t162", "hotel_bookings.csv", "easy", "single_statistic",
  "How many unique countries do the guests come from? Format: @unique_countries[count] where count is an "
  "integer.",
  {"unique_countries": int(H["country"].nunique())}, 0)
q("t163", "hotel_bookings.csv", "easy", "single_statistic",
  "What is the mean number of adults per booking for the Resort Hotel? Constraints: Only consider rows where "
  "hotel is \"Resort Hotel\". Round the answer to 2 decimal places. Format: @mean_adults_resort[mean]",
  {"mean_adults_resort": H.loc[H["hotel"] == "Resort Hotel", "adults"].mean()}, 2)
q("t164", "hotel_bookings.csv", "easy", "single_statistic",
  "Calculate the variance of the average daily rate for bookings that were not canceled (is_canceled equal "
  "to 0). Constraints: Use the sample variance with ddof=1. Format: @var_adr_kept[variance] where variance "
  "is rounded to 2 decimal places.",
  {"var_adr_kept": H.loc[H["is_canceled"] == 0, "adr"].var()}, 2)
q("t165", "hotel_bookings.csv", "easy", "count_filter",
  "How many bookings were canceled? Constraints: A booking is canceled when is_canceled is 1. Format: "
  "@canceled_bookings[count] where count is an integer.",
  {"canceled_bookings": int((H["is_canceled"] == 1).sum())}, 0)
q("t166", "hotel_bookings.csv", "easy", "single_statistic",
  "What percentage of all bookings were canceled? Constraints: Express the result as a number between 0 and "
  "100 (not a fraction), rounded to two decimal places. Format: @cancellation_rate[percentage]",
  {"cancellation_rate": 100 * H["is_canceled"].mean()}, 2)
g = H.groupby("hotel")["adr"].mean()
q("t167", "hotel_bookings.csv", "medium", "group_compare",
  "Which hotel type has the higher mean average daily rate? Constraints: Group the bookings by the hotel "
  "column and compare the arithmetic means of adr. Format: @hotel_type[name] where name is the hotel type "
  "exactly as written in the data.",
  {"hotel_type": g.idxmax()}, None)
q("t168", "hotel_bookings.csv", "medium", "group_compare",
  "Which market segment has the largest number of bookings? Format: @top_market_segment[segment] where "
  "segment is the value as written in the market_segment column.",
  {"top_market_segment": H["market_segment"].value_counts().idxmax()}, None)
adr = H["adr"]
q1, q3 = adr.quantile(0.25), adr.quantile(0.75)
iqr = q3 - q1
q("t169", "hotel_bookings.csv", "medium", "outliers",
  "Identify the outliers in adr with the interquartile range method. Constraints: An outlier is a value below "
  "Q1 - 1.5 * IQR or above Q3 + 1.5 * IQR, where IQR = Q3 - Q1 and the quartiles use pandas' default "
  "quantile. Format: @adr_outlier_count[count] where count is an integer.",
  {"adr_outlier_count": int(((adr < q1 - 1.5 * iqr) | (adr > q3 + 1.5 * iqr)).sum())}, 0)
z = (H["lead_time"] - H["lead_time"].mean()) / H["lead_time"].std()
q("t170", "hotel_bookings.csv", "medium", "outliers",
  "How many bookings have a lead_time z-score whose absolute value is greater than 3? Constraints: The "
  "z-score is (x - mean) / standard deviation, with the sample standard deviation. Format: "
  "@lead_time_outliers[count] where count is an integer.",
  {"lead_time_outliers": int((z.abs() > 3).sum())}, 0)
nights = H["stays_in_weekend_nights"] + H["stays_in_week_nights"]
q("t171", "hotel_bookings.csv", "medium", "derived",
  "Create a new column total_nights as the sum of stays_in_weekend_nights and stays_in_week_nights. What is "
  "the mean of total_nights? Format: @mean_total_nights[mean] where mean is rounded to 2 decimal places.",
  {"mean_total_nights": nights.mean()}, 2)
q("t172", "hotel_bookings.csv", "medium", "single_statistic",
  "What is the average adr of City Hotel bookings arriving in July? Constraints: Filter the rows by hotel "
  "equal to \"City Hotel\" and arrival_date_month equal to \"July\", then take the arithmetic mean. Format: "
  "@mean_adr_city_july[mean] where mean is rounded to two decimal places.",
  {"mean_adr_city_july": H.loc[(H["hotel"] == "City Hotel") & (H["arrival_date_month"] == "July"), "adr"].mean()}, 2)
q("t173", "hotel_bookings.csv", "medium", "missing",
  "How many values are missing in the children column? Format: @missing_children[count] where count is an "
  "integer.",
  {"missing_children": int(H["children"].isna().sum())}, 0)
t, p = st.ttest_ind(H.loc[H["hotel"] == "City Hotel", "adr"], H.loc[H["hotel"] == "Resort Hotel", "adr"])
q("t174", "hotel_bookings.csv", "medium", "test",
  "Is there a significant difference in the average daily rate between City Hotel and Resort Hotel? "
  "Constraints: Use an independent two-sample t-test (scipy.stats.ttest_ind with equal_var=True) at a "
  "significance level of 0.05. Format: @t_statistic[t] @p_value[p] where t is rounded to 3 decimals and p "
  "to 4 decimals.",
  {"t_statistic": round(t, 3), "p_value": round(p, 4)}, None)
Q[-1]["tolerance"] = {"t_statistic": 0.001, "p_value": 0.0001}

# r13: a table of crop fields; single statistics and correlations whose constraints
# spell the method out as a formula (symbols, "i = 1 to n"), as numbered steps, or
# with a library's function named; written before any change they measure.
CF = "crop_fields.csv"
q("t175", CF, "easy", "single_statistic",
  "Calculate the mean of the yield_t_ha column. Constraints: The mean is defined as \u03bc = (1/n) \u03a3 x_i for "
  "i = 1 to n, where n is the number of non-missing values. Round to 2 decimal places. Format: "
  "@mean_yield[value] where value is a float rounded to 2 decimal places.",
  {"mean_yield": K["yield_t_ha"].mean()}, 2)
q("t176", CF, "easy", "single_statistic",
  "What is the standard deviation of rainfall_mm? Constraints: Use the sample standard deviation "
  "s = sqrt( \u03a3 (x_i \u2212 x\u0304)\u00b2 / (n \u2212 1) ). Do not drop any rows other than those with missing "
  "rainfall. Format: @rainfall_std[std] where std is rounded to three decimals.",
  {"rainfall_std": K["rainfall_mm"].std()}, 3)
q("t177", CF, "easy", "single_statistic",
  "Compute the population standard deviation of the average temperature (AvgTempC). Constraints: "
  "\u03c3 = sqrt((1/N) * sum((x - mu)^2)), i.e. divide by N, not N-1. Format: @sigma_temp[value] (a float "
  "with 2 decimals).",
  {"sigma_temp": K["AvgTempC"].std(ddof=0)}, 2)
q("t178", CF, "easy", "single_statistic",
  "Find the variance of soil pH. Constraints: Use numpy.var with its default settings (population variance, "
  "ddof=0). Report the value rounded to 4 decimal places. Format: @soil_ph_variance[variance]",
  {"soil_ph_variance": K["soil_pH"].var(ddof=0)}, 4)
q("t179", CF, "easy", "single_statistic",
  "What is the median fertilizer application rate (fertilizer kg/ha)? Constraints: The median is the middle "
  "value of the sorted values (the average of the two middle values when n is even). Missing values are "
  "excluded. Format: @median_fertilizer[median] where median is rounded to 1 decimal place.",
  {"median_fertilizer": K["fertilizer kg/ha"].median()}, 1)
q("t180", CF, "easy", "single_statistic",
  "Determine the 90th percentile of yield_t_ha. Constraints: Use numpy.percentile with linear interpolation "
  "(the default). Format: @p90_yield[value] where value is a number rounded to two decimal places.",
  {"p90_yield": K["yield_t_ha"].quantile(0.9)}, 2)
q("t181", CF, "easy", "single_statistic",
  "What is the interquartile range of rainfall_mm? Constraints: IQR = Q3 \u2212 Q1, where Q1 and Q3 are the 25th "
  "and 75th percentiles computed with pandas' quantile(). Format: @iqr_rainfall[iqr] rounded to 2 decimals.",
  {"iqr_rainfall": K["rainfall_mm"].quantile(0.75) - K["rainfall_mm"].quantile(0.25)}, 2)
q("t182", CF, "easy", "single_statistic",
  "What is the maximum number of pest incidents recorded in a single field? Format: @max_pest_incidents[count] "
  "where count is an integer.",
  {"max_pest_incidents": int(K["pest_incidents"].max())}, 0)
q("t183", CF, "easy", "single_statistic",
  "Calculate the total rainfall across all fields. Constraints: sum the rainfall_mm column, skipping missing "
  "values. Format: @total_rainfall[total] where total is rounded to 1 decimal place.",
  {"total_rainfall": K["rainfall_mm"].sum()}, 1)
q("t184", CF, "easy", "single_statistic",
  "What proportion of fields are irrigated? Constraints: irrigated is 1 for irrigated fields and 0 otherwise. "
  "Give the share as a percentage between 0 and 100, rounded to 2 decimal places. Format: "
  "@irrigated_pct[percentage]",
  {"irrigated_pct": 100 * K["irrigated"].mean()}, 2)
q("t185", CF, "easy", "single_statistic",
  "What is the minimum soil_pH observed? Format: @min_ph[value] where value is the minimum, rounded to 2 "
  "decimals.",
  {"min_ph": K["soil_pH"].min()}, 2)
q("t186", CF, "easy", "single_statistic",
  "Calculate the coefficient of variation of yield_t_ha. Constraints: CV = standard deviation / mean \u00d7 100, "
  "using the sample standard deviation. Format: @cv_yield[cv] where cv is a percentage rounded to 2 decimals.",
  {"cv_yield": 100 * K["yield_t_ha"].std() / K["yield_t_ha"].mean()}, 2)
q("t187", CF, "easy", "single_statistic",
  "Compute the mean harvest loss percentage (harvest_loss_pct). Constraints: ignore NaN values; use pandas' "
  "mean(); round to three decimal places. Format: @mean_harvest_loss[mean_loss] where mean_loss is a float.",
  {"mean_harvest_loss": K["harvest_loss_pct"].mean()}, 3)
q("t188", CF, "easy", "single_statistic",
  "What is the standard deviation of the yield (yield_t_ha) for all fields? Constraints: Use statistics.stdev "
  "from Python's standard library, which computes the sample standard deviation. Format: @std_yield[value] "
  "where value is rounded to 3 decimal places.",
  {"std_yield": K["yield_t_ha"].std()}, 3)
d = K[["rainfall_mm", "yield_t_ha"]].dropna()
q("t189", CF, "easy", "correlation",
  "Calculate the Pearson correlation coefficient between rainfall_mm and yield_t_ha. Constraints: "
  "r = \u03a3((x_i \u2212 x\u0304)(y_i \u2212 \u0233)) / sqrt(\u03a3(x_i \u2212 x\u0304)\u00b2 \u03a3(y_i \u2212 \u0233)\u00b2); drop rows where "
  "either value is missing. Format: @r_rain_yield[r] where r is rounded to 3 decimal places.",
  {"r_rain_yield": st.pearsonr(d["rainfall_mm"], d["yield_t_ha"])[0]}, 3)
q("t190", CF, "easy", "correlation",
  "Is there a correlation between fertilizer kg/ha and yield_t_ha? Constraints: Compute Pearson's r with "
  "pandas' .corr() method. Format: @fertilizer_yield_corr[r_value] where r_value is a value between -1 and 1, "
  "rounded to 2 decimals.",
  {"fertilizer_yield_corr": K["fertilizer kg/ha"].corr(K["yield_t_ha"])}, 2)
d = K[["soil_pH", "harvest_loss_pct"]].dropna()
r, p = st.spearmanr(d["soil_pH"], d["harvest_loss_pct"])
q("t191", CF, "easy", "correlation",
  "Assess the strength of the monotonic association between soil_pH and harvest_loss_pct. Constraints: Use "
  "Spearman's rank correlation (rho = 1 \u2212 6 \u03a3 d_i\u00b2 / (n(n\u00b2 \u2212 1)) where d_i is the difference of "
  "ranks), computed with scipy.stats.spearmanr; remove rows with missing values first. Format: "
  "@spearman_rho[rho] @p_value[p] where rho is rounded to 3 decimals and p to 4 decimals.",
  {"spearman_rho": round(r, 3), "p_value": round(p, 4)}, None)
Q[-1]["tolerance"] = {"spearman_rho": 0.001, "p_value": 0.0001}
q("t192", CF, "easy", "correlation",
  "Calculate the Kendall tau correlation between AvgTempC and pest_incidents. Constraints: use "
  "scipy.stats.kendalltau with default settings. Format: @kendall_tau[tau] rounded to 3 decimals.",
  {"kendall_tau": st.kendalltau(K["AvgTempC"], K["pest_incidents"])[0]}, 3)
d = K[["AvgTempC", "harvest_loss_pct"]].dropna()
r = d["AvgTempC"].corr(d["harvest_loss_pct"])
q("t193", CF, "easy", "correlation",
  "What is the correlation coefficient between the average temperature and the harvest loss? Constraints: "
  "Pearson method. Consider the correlation strong if |r| >= 0.5, weak otherwise. Format: @correlation[r] "
  "@strength[label] where r is rounded to 2 decimals and label is \"strong\" or \"weak\".",
  {"correlation": round(r, 2), "strength": "strong" if abs(r) >= 0.5 else "weak"}, None)
Q[-1]["tolerance"] = {"correlation": 0.01, "strength": 0}
q("t194", CF, "easy", "single_statistic",
  "Compute the average yield of fields in the North region. Constraints: Filter the data where Region is "
  "\"North\", then compute the arithmetic mean of yield_t_ha. Format: @north_mean_yield[value] rounded to 2 "
  "decimal places.",
  {"north_mean_yield": K.loc[K["Region"] == "North", "yield_t_ha"].mean()}, 2)
q("t195", CF, "easy", "single_statistic",
  "\u00bfCu\u00e1l es la media de la precipitaci\u00f3n (rainfall_mm)? Restricciones: usa la media aritm\u00e9tica e "
  "ignora los valores faltantes. Formato: @media_lluvia[valor] donde valor es un n\u00famero redondeado a dos "
  "decimales.",
  {"media_lluvia": K["rainfall_mm"].mean()}, 2)
q("t196", CF, "easy", "correlation",
  "Calcula la correlaci\u00f3n de Pearson entre AvgTempC y yield_t_ha. Redondea a 3 decimales. Formato: "
  "@correlacion[r]",
  {"correlacion": K["AvgTempC"].corr(K["yield_t_ha"])}, 3)
q("t197", CF, "easy", "single_statistic",
  "What is the range (max \u2212 min) of AvgTempC? Format: @temp_range[range] rounded to 1 decimal.",
  {"temp_range": K["AvgTempC"].max() - K["AvgTempC"].min()}, 1)
q("t198", CF, "easy", "single_statistic",
  "How many distinct crops are grown? Format: @n_crops[count] where count is an integer.",
  {"n_crops": int(K["crop"].nunique())}, 0)
q("t199", CF, "easy", "single_statistic",
  "Compute the mean rainfall_mm. Constraints: 1. Load the data with pandas.read_csv. 2. Drop missing values "
  "in the rainfall_mm column. 3. Calculate the mean using numpy.mean. 4. Round the result to two decimal "
  "places. Format: @mean_rainfall[mean] where mean is a float.",
  {"mean_rainfall": K["rainfall_mm"].mean()}, 2)
q("t200", CF, "medium", "distribution",
  "Find the skewness of yield_t_ha. Constraints: Use scipy.stats.skew with bias=False. Format: "
  "@skew_yield[skewness] rounded to 4 decimals.",
  {"skew_yield": st.skew(K["yield_t_ha"], bias=False)}, 4)
q("t201", CF, "easy", "single_statistic",
  "Calculate the standard error of the mean for yield_t_ha. Constraints: SEM = s / sqrt(n), with s the sample "
  "standard deviation. Format: @sem_yield[value] rounded to 4 decimals.",
  {"sem_yield": K["yield_t_ha"].sem()}, 4)
yr = pd.to_datetime(K["planting_date"]).dt.year
q("t202", CF, "easy", "single_statistic",
  "What is the mean of AvgTempC for fields planted in 2021? Constraints: the planting_date column holds dates; "
  "take the rows whose year is 2021. Format: @mean_temp_2021[value] rounded to 2 decimals.",
  {"mean_temp_2021": K.loc[yr == 2021, "AvgTempC"].mean()}, 2)

# r17 (2026-12-08): two more tables, prompts written before any change they measure.
HT, WT = "house_sales.csv", "weather_aus.csv"
q("t203", HT, "easy", "single_statistic",
  "Calculate the mean and standard deviation of the house prices. Constraints: Use pandas to compute the "
  "mean and the sample standard deviation of the price column. Format: @mean_price[mean] @std_price[std] "
  "where \"mean\" and \"std\" are numbers rounded to two decimal places.",
  {"mean_price": HS["price"].mean(), "std_price": HS["price"].std()}, 2)
r, p = st.pearsonr(HS["sqft_living"].dropna(), HS.loc[HS["sqft_living"].notna(), "price"])
rel = "linear" if p < 0.05 and abs(r) >= 0.5 else ("nonlinear" if p < 0.05 else "none")
q("t204", HT, "medium", "correlation",
  "Is there a relationship between the living area (sqft_living) and the sale price? Calculate the Pearson "
  "correlation coefficient (r) to assess the strength and direction of the linear relationship between "
  "sqft_living and price. Assess the significance of the correlation using a two-tailed test with a "
  "significance level (alpha) of 0.05. Ignore the rows where sqft_living is missing. Consider the "
  "relationship to be linear if the p-value is less than 0.05 and the absolute r value is greater than or "
  "equal to 0.5; nonlinear if the p-value is less than 0.05 and the absolute r value is less than 0.5; "
  "none otherwise. Format: @correlation_coefficient[r_value] @p_value[p_value] "
  "@relationship_type[relationship_type] where \"r_value\" is a number between -1 and 1 rounded to two "
  "decimal places, \"p_value\" is a number between 0 and 1 rounded to four decimal places, and "
  "\"relationship_type\" is one of \"linear\", \"nonlinear\" or \"none\".",
  {"correlation_coefficient": round(r, 2), "p_value": round(p, 4), "relationship_type": rel})
Q[-1]["tolerance"] = {"correlation_coefficient": 0.01, "p_value": 0.0001, "relationship_type": 0}
q("t205", HT, "easy", "single_statistic",
  "How many houses in the dataset have a waterfront view? Constraints: a house has a waterfront view when "
  "the waterfront column equals 1. Format: @waterfront_houses[count] where \"count\" is an integer.",
  {"waterfront_houses": int((HS["waterfront"] == 1).sum())}, 0)
q("t206", HT, "easy", "single_statistic",
  "What is the median year of construction of the houses that have more than 3 bedrooms? Constraints: "
  "filter the rows with bedrooms > 3, then take the median of yr_built. Format: @median_year[year] where "
  "\"year\" is a number with one decimal place.",
  {"median_year": HS.loc[HS["bedrooms"] > 3, "yr_built"].median()}, 1)
q("t207", HT, "easy", "single_statistic",
  "Find the highest sale price among houses located in zipcode 98103. Format: @max_price_98103[price] "
  "where \"price\" is an integer.",
  {"max_price_98103": HS.loc[HS["zipcode"] == 98103, "price"].max()}, 0)
q("t208", HT, "easy", "single_statistic",
  "What is the average number of bathrooms per house? Round your answer to two decimal places. Format: "
  "@avg_bathrooms[value]",
  {"avg_bathrooms": HS["bathrooms"].mean()}, 2)
q("t209", HT, "medium", "distribution",
  "Determine the 90th percentile of the lot size (sqft_lot). Constraints: use numpy.percentile (or "
  "pandas quantile) with the default linear interpolation. Format: @p90_lot[value] where \"value\" is "
  "rounded to one decimal place.",
  {"p90_lot": HS["sqft_lot"].quantile(0.9)}, 1)
q("t210", HT, "easy", "single_statistic",
  "What percentage of the houses are in condition 5? Constraints: divide the number of houses whose "
  "condition is 5 by the total number of houses and multiply by 100. Format: @pct_condition_5[percentage] "
  "where \"percentage\" is a number between 0 and 100 rounded to two decimal places.",
  {"pct_condition_5": 100 * (HS["condition"] == 5).mean()}, 2)
q("t211", HT, "easy", "single_statistic",
  "Compute the coefficient of variation of the price, defined as the standard deviation divided by the mean "
  "(use the sample standard deviation). Format: @cv_price[cv] where \"cv\" is rounded to four decimals.",
  {"cv_price": HS["price"].std() / HS["price"].mean()}, 4)
q("t212", HT, "easy", "correlation",
  "Is the year a house was built associated with its condition? Calculate the Spearman rank correlation "
  "coefficient between yr_built and condition using scipy.stats.spearmanr. Format: @spearman_corr[rho] "
  "where \"rho\" is rounded to three decimal places.",
  {"spearman_corr": st.spearmanr(HS["yr_built"], HS["condition"])[0]}, 3)
pps = HS["price"] / HS["sqft_living"]
q("t213", HT, "medium", "derived",
  "Create a new feature price_per_sqft by dividing the price by sqft_living, then report its mean. "
  "Constraints: rows where sqft_living is missing are excluded. Format: @mean_price_per_sqft[value] rounded "
  "to two decimal places.",
  {"mean_price_per_sqft": pps.mean()}, 2)
q("t214", HT, "easy", "single_statistic",
  "Calculate the interquartile range (IQR) of the house prices. Constraints: IQR = Q3 - Q1, where Q1 and Q3 "
  "are the 25th and 75th percentiles computed with pandas. Format: @iqr_price[value] rounded to two "
  "decimal places.",
  {"iqr_price": HS["price"].quantile(0.75) - HS["price"].quantile(0.25)}, 2)
q("t215", HT, "easy", "single_statistic",
  "What is the average price of houses in the Fremont neighbourhood? Format: @fremont_mean_price[value] "
  "where \"value\" is rounded to the nearest whole number.",
  {"fremont_mean_price": HS.loc[HS["neighbourhood"] == "Fremont", "price"].mean()}, 0)
q("t216", HT, "easy", "single_statistic",
  "Find the minimum and maximum living area of the houses. Format: @min_sqft[value] @max_sqft[value] "
  "where both values are integers.",
  {"min_sqft": HS["sqft_living"].min(), "max_sqft": HS["sqft_living"].max()}, 0)
q("t217", WT, "easy", "single_statistic",
  "What is the average maximum temperature on days when it rained (RainToday is 'Yes')? Constraints: only "
  "keep the rows where RainToday equals Yes. Format: @mean_maxtemp_rain[value] where \"value\" is rounded "
  "to two decimal places.",
  {"mean_maxtemp_rain": W.loc[W["RainToday"] == "Yes", "MaxTemp"].mean()}, 2)
r, p = st.pearsonr(W["Humidity3pm"], W["Rainfall"])
q("t218", WT, "easy", "correlation",
  "Calculate the correlation between the afternoon humidity (Humidity3pm) and the amount of rainfall. "
  "Constraints: use the Pearson method and report the correlation coefficient and the p-value. Format: "
  "@r[value] @p_value[value] where r is rounded to 3 decimal places and the p-value to 4 decimal places.",
  {"r": round(r, 3), "p_value": round(p, 4)})
Q[-1]["tolerance"] = {"r": 0.001, "p_value": 0.0001}
q("t219", WT, "easy", "single_statistic",
  "What is the total rainfall recorded in Sydney over the whole year? Format: @sydney_total_rain[value] "
  "rounded to one decimal place.",
  {"sydney_total_rain": W.loc[W["Location"] == "Sydney", "Rainfall"].sum()}, 1)
q("t220", WT, "medium", "derived",
  "Calculate the mean daily temperature range, where the range of a day is MaxTemp minus MinTemp. Format: "
  "@mean_temp_range[value] where \"value\" is rounded to two decimal places.",
  {"mean_temp_range": (W["MaxTemp"] - W["MinTemp"]).mean()}, 2)
q("t221", WT, "easy", "single_statistic",
  "How many days had a wind gust speed greater than 60 km/h? Constraints: count the rows where "
  "WindGustSpeed > 60, ignoring missing values. Format: @windy_days[count] where \"count\" is an integer.",
  {"windy_days": int((W["WindGustSpeed"] > 60).sum())}, 0)
q("t222", WT, "easy", "single_statistic",
  "Compute the standard deviation of the 9am pressure (Pressure9am) using the population formula (divide "
  "by N). Format: @std_pressure[value] rounded to three decimal places.",
  {"std_pressure": W["Pressure9am"].std(ddof=0)}, 3)
q("t223", WT, "easy", "single_statistic",
  "What is the most common wind gust direction? Format: @most_common_dir[direction] where \"direction\" is "
  "a string such as \"N\" or \"SW\".",
  {"most_common_dir": W["WindGustDir"].mode()[0]})
q("t224", WT, "medium", "distribution",
  "Calculate the kurtosis of the Rainfall column. Constraints: use Fisher's definition (normal = 0.0) as "
  "implemented by pandas' kurt(). Format: @rainfall_kurtosis[value] rounded to two decimal places.",
  {"rainfall_kurtosis": W["Rainfall"].kurt()}, 2)
q("t225", WT, "easy", "correlation",
  "Find the correlation coefficient between MinTemp and MaxTemp. Constraints: Pearson correlation, computed "
  "with pandas.DataFrame.corr. Format: @corr_min_max[value] where \"value\" is rounded to four decimals.",
  {"corr_min_max": W["MinTemp"].corr(W["MaxTemp"])}, 4)
q("t226", WT, "easy", "single_statistic",
  "What was the average afternoon humidity in January? Constraints: parse the Date column as dates and keep "
  "the rows of January. Format: @jan_humidity3pm[value] rounded to two decimal places.",
  {"jan_humidity3pm": W.loc[pd.to_datetime(W["Date"]).dt.month == 1, "Humidity3pm"].mean()}, 2)
q1, q3 = W["Rainfall"].quantile([0.25, 0.75])
iqr = q3 - q1
q("t227", WT, "medium", "outliers",
  "Identify the outliers in the Rainfall column using the IQR method: a value is an outlier when it is "
  "below Q1 - 1.5*IQR or above Q3 + 1.5*IQR. How many outliers are there? Format: @rain_outliers[count] "
  "where \"count\" is an integer.",
  {"rain_outliers": int(((W["Rainfall"] < q1 - 1.5 * iqr) | (W["Rainfall"] > q3 + 1.5 * iqr)).sum())}, 0)
q("t228", WT, "easy", "single_statistic",
  "What is the median MinTemp in Melbourne? Constraints: consider only the records whose Location is "
  "Melbourne. Format: @melbourne_median_min[value] rounded to one decimal place.",
  {"melbourne_median_min": W.loc[W["Location"] == "Melbourne", "MinTemp"].median()}, 1)
q("t229", WT, "easy", "single_statistic",
  "Calculate the variance of Humidity9am. Constraints: use the sample variance (ddof=1). Format: "
  "@var_humidity9am[value] where \"value\" is a number rounded to two decimal places.",
  {"var_humidity9am": W["Humidity9am"].var()}, 2)
r, p = st.pearsonr(W["Pressure9am"], W["MaxTemp"])
q("t230", WT, "easy", "correlation",
  "Does the morning pressure correlate with the maximum temperature? Constraints: compute the Pearson "
  "correlation coefficient between Pressure9am and MaxTemp with scipy, and its two-sided p-value. Format: "
  "@pearson_r[r] @p_value[p] where \"r\" is rounded to two decimals and \"p\" to four decimals.",
  {"pearson_r": round(r, 2), "p_value": round(p, 4)})
Q[-1]["tolerance"] = {"pearson_r": 0.01, "p_value": 0.0001}

with open(os.path.join(HERE, "questions.jsonl"), "w") as f:
    for x in Q:
        f.write(json.dumps(x, ensure_ascii=False) + "\n")
print(len(Q), "questions")
