#!/usr/bin/env python3
"""The 48 held-out questions and the code that computes their answers.

Each question is written here once (prompt, tier, kind, why, tolerance) with a function
that computes its expected answer with pandas/scipy from tables/*.csv. Running this
script writes questions.jsonl; nothing in questions.jsonl is typed by hand.

    python3 answers.py            # writes questions.jsonl
    python3 answers.py --check    # recomputes and fails if questions.jsonl differs
"""
from __future__ import annotations

import json
import math
import os
import sys

import numpy as np
import pandas as pd
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = os.path.join(HERE, "tables")
OUT = os.path.join(HERE, "questions.jsonl")

_cache: dict[str, pd.DataFrame] = {}


def t(name: str) -> pd.DataFrame:
    if name not in _cache:
        _cache[name] = pd.read_csv(os.path.join(TABLES, name))
    return _cache[name].copy()


def r(x, d):
    """Round half away from zero at d decimals (what a person reads as 'rounded')."""
    x = float(x)
    q = 10 ** d
    v = math.floor(abs(x) * q + 0.5) / q
    v = math.copysign(v, x)
    return int(v) if d == 0 else v


def tol(d):
    """One unit of the last decimal asked for: absorbs rounding done at another step."""
    return 0 if d is None else float(f"{10 ** -d:.10f}")


QUESTIONS = []


def q(id, table, tier, kind, prompt, why, decimals, accept=None):
    """Register a question; `decimals` maps each answer name to its decimals (None:
    exact, for counts and names)."""
    def deco(fn):
        QUESTIONS.append(dict(id=id, table=table, tier=tier, kind=kind, prompt=prompt.strip(),
                              why=why, decimals=decimals, fn=fn, accept=accept))
        return fn
    return deco


# ---------------------------------------------------------------- ferry_manifest.csv
F = "ferry_manifest.csv"


@q("h01", F, "easy", "single_statistic", """
What is the average ticket price paid by the passengers on the manifest? Use the TicketPrice column and compute the arithmetic mean with pandas, skipping missing values. Round the result to two decimal places.
@mean_ticket_price[mean_value] where "mean_value" is a number rounded to two decimal places.
""", "Mean of one named column (CamelCase name), DABench wording with the library and rounding named.",
   {"mean_ticket_price": 2})
def _():
    return {"mean_ticket_price": r(t(F)["TicketPrice"].mean(), 2)}


@q("h02", F, "easy", "single_statistic", """
¿Cuál es la mediana de la edad de los pasajeros? Usa la columna AgeAtTravel y excluye los valores faltantes antes de calcularla. Redondea a un decimal.
@mediana_edad[valor] donde "valor" es un número redondeado a un decimal.
""", "Median of a column with 14% missing values, asked in Spanish.", {"mediana_edad": 1})
def _():
    return {"mediana_edad": r(t(F)["AgeAtTravel"].median(), 1)}


@q("h03", F, "easy", "correlation", """
Calculate the Pearson correlation coefficient (r) between the passenger's age and the ticket price. Use the AgeAtTravel and TicketPrice columns and drop the rows where AgeAtTravel is missing before computing r. r is the covariance of the two columns divided by the product of their standard deviations.
@age_price_correlation[r_value] where "r_value" is a number between -1 and 1 rounded to three decimal places.
""", "Pearson r of two named columns, with the formula restated in words and a missing-value rule.",
   {"age_price_correlation": 3})
def _():
    d = t(F).dropna(subset=["AgeAtTravel"])
    return {"age_price_correlation": r(stats.pearsonr(d["AgeAtTravel"], d["TicketPrice"])[0], 3)}


@q("h04", F, "medium", "outliers", """
Identify outliers in TicketPrice using the z-score method. For each passenger compute z = (x minus the mean of TicketPrice) divided by the standard deviation of TicketPrice, where the standard deviation is the sample standard deviation (ddof = 1, the pandas default). A ticket is an outlier when the absolute value of z is greater than 3. How many tickets are outliers?
@outlier_count[count] where "count" is an integer.
""", "Z-score outlier count with the formula in words and the sample standard deviation.",
   {"outlier_count": None})
def _():
    x = t(F)["TicketPrice"]
    z = (x - x.mean()) / x.std(ddof=1)
    return {"outlier_count": int((z.abs() > 3).sum())}


@q("h05", F, "medium", "test", """
Is the cabin tier associated with whether a passenger was rescued? Perform a chi-square test of independence on the contingency table of cabin_tier against Rescued, using scipy.stats.chi2_contingency with its default settings. Report the chi-square statistic and the p-value.
@chi2_statistic[chi2] where "chi2" is rounded to two decimal places.
@p_value[p] where "p" is rounded to four decimal places.
""", "Chi-square test of independence of a 3-level category and a 0/1 column.",
   {"chi2_statistic": 2, "p_value": 4})
def _():
    d = t(F)
    chi2, p, _, _ = stats.chi2_contingency(pd.crosstab(d["cabin_tier"], d["Rescued"]))
    return {"chi2_statistic": r(chi2, 2), "p_value": r(p, 4)}


@q("h06", F, "medium", "group", """
Which cabin tier had the highest rescue rate? The rescue rate of a tier is the percentage of its passengers with Rescued equal to 1, i.e. the mean of Rescued times 100, a number between 0 and 100 rounded to two decimals. Give the tier and its rate.
@best_tier[tier_name], @rescue_rate[rate] where "tier_name" is one of the values of cabin_tier and "rate" is a number between 0 and 100 rounded to two decimals.
""", "Group mean of a 0/1 column as a percentage, and which group is highest.",
   {"best_tier": None, "rescue_rate": 2})
def _():
    g = t(F).groupby("cabin_tier")["Rescued"].mean() * 100
    return {"best_tier": g.idxmax(), "rescue_rate": r(g.max(), 2)}


# ---------------------------------------------------------------- property_sales.csv
P = "property_sales.csv"


@q("h07", P, "easy", "single_statistic", """
Find the standard deviation of the sale prices. Use the sample standard deviation (divide by n minus 1) of the SalePrice column, as pandas' std() does by default. Round to two decimal places.
@std_sale_price[std_value] where "std_value" is a number rounded to two decimal places.
""", "Sample standard deviation of a price column, with n minus 1 spelled out.", {"std_sale_price": 2})
def _():
    return {"std_sale_price": r(t(P)["SalePrice"].std(ddof=1), 2)}


@q("h08", P, "easy", "correlation", """
What is the Spearman rank correlation between the living area (LivingArea_m2) and the sale price (SalePrice)? Use scipy.stats.spearmanr or pandas corr with method='spearman'.
@spearman_rho[rho] where "rho" is a number between -1 and 1 rounded to three decimals.
""", "Spearman correlation of two named columns (one with a unit suffix).", {"spearman_rho": 3})
def _():
    d = t(P)
    return {"spearman_rho": r(stats.spearmanr(d["LivingArea_m2"], d["SalePrice"])[0], 3)}


@q("h09", P, "easy", "count_filter", """
How many properties sold for more than 400,000? Count the rows whose SalePrice is strictly greater than 400000.
@expensive_sales[count] where "count" is an integer.
""", "Count of rows over a threshold written with a thousands separator.", {"expensive_sales": None})
def _():
    return {"expensive_sales": int((t(P)["SalePrice"] > 400000).sum())}


@q("h10", P, "medium", "derived", """
Create a new column price_per_m2 equal to SalePrice divided by LivingArea_m2. What is the mean of price_per_m2 over all sales? Round the answer to two decimal places.
@mean_price_per_m2[value] where "value" is a number rounded to two decimal places.
""", "A derived ratio column, then its mean.", {"mean_price_per_m2": 2})
def _():
    d = t(P)
    return {"mean_price_per_m2": r((d["SalePrice"] / d["LivingArea_m2"]).mean(), 2)}


@q("h11", P, "medium", "distribution", """
Analiza la distribución del precio de venta (SalePrice). Calcula la asimetría (skewness) y la curtosis con scipy.stats.skew y scipy.stats.kurtosis, con sus parámetros por defecto (curtosis de Fisher, es decir, la de una normal es 0). Redondea ambos valores a tres decimales.
@asimetria[valor_asimetria], @curtosis[valor_curtosis] donde ambos valores son números redondeados a tres decimales.
""", "Skewness and Fisher kurtosis with scipy defaults (biased), asked in Spanish.",
   {"asimetria": 3, "curtosis": 3})
def _():
    x = t(P)["SalePrice"]
    return {"asimetria": r(stats.skew(x), 3), "curtosis": r(stats.kurtosis(x), 3)}


@q("h12", P, "medium", "group", """
Compute the average sale price for each neighbourhood (Neighbourhood column). Which neighbourhood has the highest average sale price, and what is that average? Round the average to two decimal places.
@top_neighbourhood[name], @top_mean_price[value] where "name" is a neighbourhood as written in the data and "value" is rounded to two decimals.
""", "Group mean and the group with the highest mean.", {"top_neighbourhood": None, "top_mean_price": 2})
def _():
    g = t(P).groupby("Neighbourhood")["SalePrice"].mean()
    return {"top_neighbourhood": g.idxmax(), "top_mean_price": r(g.max(), 2)}


# ---------------------------------------------------------------- exam_results.csv
E = "exam_results.csv"


@q("h13", E, "easy", "single_statistic", """
Calculate the variance of the algebra scores. Use the AlgebraPts column and the sample variance, i.e. the sum of (x_i minus the mean) squared for i from 1 to n, divided by n minus 1. Round to two decimal places.
@algebra_variance[variance] where "variance" is a number rounded to two decimal places.
""", "Sample variance with the formula restated ('i from 1 to n').", {"algebra_variance": 2})
def _():
    return {"algebra_variance": r(t(E)["AlgebraPts"].var(ddof=1), 2)}


@q("h14", E, "easy", "single_statistic", """
What is the 75th percentile of the Reading Comp score? Use pandas' quantile with its default linear interpolation. Give the answer rounded to two decimals.
@reading_p75[value] where "value" is a number rounded to two decimal places.
""", "A percentile of a column whose name has a space.", {"reading_p75": 2})
def _():
    return {"reading_p75": r(t(E)["Reading Comp"].quantile(0.75), 2)}


@q("h15", E, "easy", "correlation", """
Is there a linear relationship between weekly study hours and the algebra result? Calculate the Pearson correlation coefficient between StudyHrsWk and AlgebraPts. Round r to three decimal places.
@r_study_algebra[r] where "r" is a number between -1 and 1 rounded to three decimal places.
""", "Pearson r of two abbreviated CamelCase columns.", {"r_study_algebra": 3})
def _():
    d = t(E)
    return {"r_study_algebra": r(stats.pearsonr(d["StudyHrsWk"], d["AlgebraPts"])[0], 3)}


@q("h16", E, "medium", "test", """
Do candidates with a private tutor score differently in algebra from those without? Run an independent two-sample t-test (Student's t-test assuming equal variances, scipy.stats.ttest_ind with default arguments) comparing AlgebraPts of candidates with private_tutor equal to "yes" against those with "no", passing the "yes" group first. Report the t statistic and the p-value.
@t_statistic[t] where "t" is rounded to three decimals.
@p_value[p] where "p" is rounded to four decimals.
""", "Student's two-sample t-test between the two values of a yes/no column.",
   {"t_statistic": 3, "p_value": 4})
def _():
    d = t(E)
    res = stats.ttest_ind(d.loc[d["private_tutor"] == "yes", "AlgebraPts"],
                          d.loc[d["private_tutor"] == "no", "AlgebraPts"])
    return {"t_statistic": r(res.statistic, 3), "p_value": r(res.pvalue, 4)}


@q("h17", E, "medium", "derived", """
Crea una columna nota_total que sea la suma de AlgebraPts, Reading Comp y essay_score, solo para los candidatos que tienen las tres notas (descarta las filas donde falte alguna). ¿Cuál es la media de nota_total? Redondea a dos decimales.
@media_nota_total[valor] donde "valor" es un número redondeado a dos decimales.
""", "A derived sum of three columns (one with missing values) and its mean, in Spanish.",
   {"media_nota_total": 2})
def _():
    d = t(E).dropna(subset=["AlgebraPts", "Reading Comp", "essay_score"])
    return {"media_nota_total": r((d["AlgebraPts"] + d["Reading Comp"] + d["essay_score"]).mean(), 2)}


@q("h18", E, "medium", "count_filter", """
How many female candidates (female equal to 1) scored at least 70 in Reading Comp? Count the rows where female is 1 and Reading Comp is greater than or equal to 70.
@count_female_reading70[n] where "n" is an integer.
""", "Count with two conditions, one on a 0/1 column.", {"count_female_reading70": None})
def _():
    d = t(E)
    return {"count_female_reading70": int(((d["female"] == 1) & (d["Reading Comp"] >= 70)).sum())}


# ---------------------------------------------------------------- station_weather.csv
W = "station_weather.csv"


@q("h19", W, "easy", "single_statistic", """
What is the mean daily maximum temperature over all stations and days in the file? Use the TMAX_C column (degrees Celsius) and ignore missing readings. Round to two decimal places.
@mean_tmax[value] where "value" is a number rounded to two decimal places.
""", "Mean of an upper-case abbreviated column over a long table.", {"mean_tmax": 2})
def _():
    return {"mean_tmax": r(t(W)["TMAX_C"].mean(), 2)}


@q("h20", W, "easy", "single_statistic", """
Find the highest wind speed recorded in the dataset (column "Wind Speed kmh"). Report it as it appears in the data, with one decimal.
@max_wind[value] where "value" is a number with one decimal.
""", "Maximum of a column whose name has spaces and a unit.", {"max_wind": 1})
def _():
    return {"max_wind": r(t(W)["Wind Speed kmh"].max(), 1)}


@q("h21", W, "easy", "correlation", """
Calcula el coeficiente de correlación de Pearson entre la temperatura máxima diaria (TMAX_C) y la humedad relativa (RH_pct), usando solo las filas donde ambas columnas tienen valor. Redondea a tres decimales.
@correlacion_tmax_humedad[r] donde "r" es un número entre -1 y 1 redondeado a tres decimales.
""", "Pearson r of two columns with missing values, in Spanish.", {"correlacion_tmax_humedad": 3})
def _():
    d = t(W).dropna(subset=["TMAX_C", "RH_pct"])
    return {"correlacion_tmax_humedad": r(stats.pearsonr(d["TMAX_C"], d["RH_pct"])[0], 3)}


@q("h22", W, "medium", "derived", """
Compute the diurnal temperature range for each day, defined as TMAX_C minus TMIN_C. What is the average diurnal temperature range across all rows where both temperatures are present? Round to two decimals.
@mean_diurnal_range[value] where "value" is a number rounded to two decimal places.
""", "A derived difference of two columns, then its mean.", {"mean_diurnal_range": 2})
def _():
    d = t(W).dropna(subset=["TMAX_C", "TMIN_C"])
    return {"mean_diurnal_range": r((d["TMAX_C"] - d["TMIN_C"]).mean(), 2)}


@q("h23", W, "medium", "group", """
Which station received the most precipitation in 2023? Sum PRCP_mm for each station_id and report the station with the largest total and that total in millimetres, rounded to one decimal.
@wettest_station[station_id], @total_precip_mm[total] where "total" is rounded to one decimal place.
""", "Group sum and the group with the largest sum; the group key is an id code.",
   {"wettest_station": None, "total_precip_mm": 1})
def _():
    g = t(W).groupby("station_id")["PRCP_mm"].sum()
    return {"wettest_station": g.idxmax(), "total_precip_mm": r(g.max(), 1)}


@q("h24", W, "medium", "distribution", """
Test whether the daily minimum temperatures at station USW00012839 are normally distributed. Use the Shapiro-Wilk test (scipy.stats.shapiro) on the TMIN_C values of that station after dropping missing values. Report the W statistic and the p-value.
@shapiro_w[w] where "w" is rounded to four decimals.
@shapiro_p[p] where "p" is rounded to four decimals.
""", "Shapiro-Wilk normality test on a filtered subset (one station).", {"shapiro_w": 4, "shapiro_p": 4})
def _():
    d = t(W)
    x = d.loc[d["station_id"] == "USW00012839", "TMIN_C"].dropna()
    res = stats.shapiro(x)
    return {"shapiro_w": r(res.statistic, 4), "shapiro_p": r(res.pvalue, 4)}


# ---------------------------------------------------------------- workforce.csv
H = "workforce.csv"


@q("h25", H, "easy", "single_statistic", """
What is the median monthly income of the employees? Use the MonthlyIncome column.
@median_income[value] where "value" is a number rounded to one decimal place.
""", "Median of one named column, short prompt.", {"median_income": 1})
def _():
    return {"median_income": r(t(H)["MonthlyIncome"].median(), 1)}


@q("h26", H, "easy", "single_statistic", """
Calcula la desviación estándar poblacional de los años en la empresa (YearsAtCompany), es decir, dividiendo por n y no por n menos 1 (ddof=0 en numpy). Redondea el resultado a dos decimales.
@desviacion_anios[valor] donde "valor" es un número redondeado a dos decimales.
""", "Population standard deviation (ddof=0), in Spanish.", {"desviacion_anios": 2})
def _():
    return {"desviacion_anios": r(np.std(t(H)["YearsAtCompany"].to_numpy(), ddof=0), 2)}


@q("h27", H, "easy", "group", """
Which department has the highest average monthly income? Group by Dept, take the mean of MonthlyIncome, and report the department and its mean rounded to two decimals.
@top_dept[dept], @top_dept_mean_income[value] where "value" is rounded to two decimal places.
""", "Group mean by an abbreviated column name, and the top group.",
   {"top_dept": None, "top_dept_mean_income": 2})
def _():
    g = t(H).groupby("Dept")["MonthlyIncome"].mean()
    return {"top_dept": g.idxmax(), "top_dept_mean_income": r(g.max(), 2)}


@q("h28", H, "medium", "outliers", """
Detect outliers in MonthlyIncome with the interquartile range rule. Compute Q1 and Q3 with pandas quantile (default linear interpolation), IQR = Q3 minus Q1, and count the employees whose income is below Q1 − 1.5 × IQR or above Q3 + 1.5 × IQR.
@income_outliers[count] where "count" is an integer.
""", "IQR-rule outlier count with unicode minus and times signs in the formula.",
   {"income_outliers": None})
def _():
    x = t(H)["MonthlyIncome"]
    q1, q3 = x.quantile(0.25), x.quantile(0.75)
    i = q3 - q1
    return {"income_outliers": int(((x < q1 - 1.5 * i) | (x > q3 + 1.5 * i)).sum())}


@q("h29", H, "medium", "test", """
Is attrition independent of working overtime? Build the 2×2 contingency table of OverTime and Attrition and run a chi-square test of independence with scipy.stats.chi2_contingency using its defaults (Yates' continuity correction is applied to 2×2 tables). Report the p-value rounded to four decimals, and state whether the association is significant at alpha = 0.05.
@p_value[p] where "p" is a number rounded to four decimal places.
""", "Chi-square test on a 2x2 table (Yes/No against 0/1), with Yates' correction.", {"p_value": 4})
def _():
    d = t(H)
    return {"p_value": r(stats.chi2_contingency(pd.crosstab(d["OverTime"], d["Attrition"]))[1], 4)}


@q("h30", H, "medium", "count_filter", """
What is the average age of employees at job level 4 or above? Filter the rows with JobLevel greater than or equal to 4 and compute the mean of age_yrs. Round to two decimals.
@mean_age_senior[value] where "value" is rounded to two decimal places.
""", "Mean of one column over a filtered subset (numeric condition).", {"mean_age_senior": 2})
def _():
    d = t(H)
    return {"mean_age_senior": r(d.loc[d["JobLevel"] >= 4, "age_yrs"].mean(), 2)}


# ---------------------------------------------------------------- webshop_orders.csv
O = "webshop_orders.csv"


@q("h31", O, "easy", "single_statistic", """
What is the total revenue in the file? Sum the "Total Sales" column over all order lines and round to two decimals.
@total_revenue[value] where "value" is a number rounded to two decimal places.
""", "Sum of a column named with a space ('Total Sales').", {"total_revenue": 2})
def _():
    return {"total_revenue": r(t(O)["Total Sales"].sum(), 2)}


@q("h32", O, "easy", "count_filter", """
How many order lines were shipped to Germany? Count the rows where Country is "Germany".
@germany_orders[count] where "count" is an integer.
""", "Count of rows equal to one text value.", {"germany_orders": None})
def _():
    return {"germany_orders": int((t(O)["Country"] == "Germany").sum())}


@q("h33", O, "easy", "correlation", """
Calculate the Pearson correlation between the discount percentage (DiscountPct) and the quantity ordered (Qty). Round the coefficient to three decimals.
@discount_qty_r[r] where "r" is a number between -1 and 1 rounded to three decimal places.
""", "Pearson r of two abbreviated columns.", {"discount_qty_r": 3})
def _():
    d = t(O)
    return {"discount_qty_r": r(stats.pearsonr(d["DiscountPct"], d["Qty"])[0], 3)}


@q("h34", O, "medium", "distribution", """
Describe the shape of the distribution of Total Sales: compute its skewness and its excess kurtosis with pandas (Series.skew() and Series.kurt(), which are the bias-corrected sample versions). Round both to three decimals.
@skewness[s], @kurtosis[k] where both values are numbers rounded to three decimal places.
""", "Bias-corrected skewness and excess kurtosis (pandas), not scipy's defaults.",
   {"skewness": 3, "kurtosis": 3})
def _():
    x = t(O)["Total Sales"]
    return {"skewness": r(x.skew(), 3), "kurtosis": r(x.kurt(), 3)}


@q("h35", O, "medium", "derived", """
Extrae el mes de la columna InvoiceDate (número de mes de 1 a 12) y suma la columna "Total Sales" por mes. ¿Qué mes tuvo las mayores ventas totales y cuánto vendió? Redondea el total a dos decimales.
@mes_top[mes], @ventas_mes_top[total] donde "mes" es un entero de 1 a 12 y "total" un número redondeado a dos decimales.
""", "A month derived from a date column, a group sum by it and the top month, in Spanish.",
   {"mes_top": None, "ventas_mes_top": 2})
def _():
    d = t(O)
    g = d.groupby(pd.to_datetime(d["InvoiceDate"]).dt.month)["Total Sales"].sum()
    return {"mes_top": int(g.idxmax()), "ventas_mes_top": r(g.max(), 2)}


@q("h36", O, "medium", "outliers", """
Flag unusual order quantities with z-scores: z = (Qty minus the mean of Qty) divided by the population standard deviation of Qty (ddof = 0, as scipy.stats.zscore computes it by default). Count the order lines with |z| > 2.5.
@qty_outliers[count] where "count" is an integer.
""", "Z-score outlier count with the population standard deviation and a 2.5 threshold.",
   {"qty_outliers": None})
def _():
    z = stats.zscore(t(O)["Qty"])
    return {"qty_outliers": int((np.abs(z) > 2.5).sum())}


# ---------------------------------------------------------------- bp_trial.csv
B = "bp_trial.csv"


@q("h37", B, "easy", "single_statistic", """
Calculate the mean body-mass index of the participants. Use the BMI column, excluding missing values, and round to two decimal places.
@mean_bmi[value] where "value" is a number rounded to two decimal places.
""", "Mean of an upper-case column with missing values.", {"mean_bmi": 2})
def _():
    return {"mean_bmi": r(t(B)["BMI"].mean(), 2)}


@q("h38", B, "easy", "single_statistic", """
What percentage of the trial participants are smokers? The smoker column is 1 for a smoker and 0 otherwise; report the share as a number between 0 and 100 rounded to two decimals.
@smoker_pct[pct] where "pct" is a number between 0 and 100 rounded to two decimals.
""", "Share of a 0/1 column as a percentage ('a number between 0 and 100').", {"smoker_pct": 2})
def _():
    return {"smoker_pct": r(t(B)["smoker"].mean() * 100, 2)}


@q("h39", B, "easy", "correlation", """
¿Qué correlación de Spearman hay entre la edad al ingreso (age_at_enrolment) y la presión sistólica basal (baseline_sbp)? Usa scipy.stats.spearmanr y redondea el coeficiente a tres decimales.
@rho_edad_pas[rho] donde "rho" es un número entre -1 y 1 redondeado a tres decimales.
""", "Spearman correlation of two snake_case columns, in Spanish.", {"rho_edad_pas": 3})
def _():
    d = t(B)
    return {"rho_edad_pas": r(stats.spearmanr(d["age_at_enrolment"], d["baseline_sbp"])[0], 3)}


@q("h40", B, "medium", "test", """
Compare the change in systolic blood pressure between the two arms. For each subject the change is wk12_sbp minus baseline_sbp; drop subjects whose wk12_sbp is missing. Run Welch's t-test (scipy.stats.ttest_ind with equal_var=False) on the change, with the Treatment group first and the Placebo group second. Report the t statistic rounded to three decimals and the p-value rounded to four decimals.
@t_statistic[t], @p_value[p]
""", "A derived change column, then Welch's t-test between the two arms.",
   {"t_statistic": 3, "p_value": 4})
def _():
    d = t(B).dropna(subset=["wk12_sbp"])
    ch = d["wk12_sbp"] - d["baseline_sbp"]
    res = stats.ttest_ind(ch[d["arm"] == "Treatment"], ch[d["arm"] == "Placebo"], equal_var=False)
    return {"t_statistic": r(res.statistic, 3), "p_value": r(res.pvalue, 4)}


@q("h41", B, "medium", "test", """
In the Treatment arm only, did systolic pressure fall from baseline to week 12? Use a paired t-test (scipy.stats.ttest_rel) of baseline_sbp against wk12_sbp, in that order, on the Treatment subjects with both measurements. Report the t statistic rounded to two decimals and the p-value rounded to four decimals.
@t_statistic[t] @p_value[p]
""", "Paired t-test on a filtered subset; the p-value rounds to 0.", {"t_statistic": 2, "p_value": 4})
def _():
    d = t(B)
    d = d[(d["arm"] == "Treatment")].dropna(subset=["baseline_sbp", "wk12_sbp"])
    res = stats.ttest_rel(d["baseline_sbp"], d["wk12_sbp"])
    return {"t_statistic": r(res.statistic, 2), "p_value": r(res.pvalue, 4)}


@q("h42", B, "medium", "outliers", """
Count the outliers of LDL cholesterol (column "LDL mg/dL") using Tukey's fences: a value is an outlier if it is less than Q1 minus 1.5 times the IQR or greater than Q3 plus 1.5 times the IQR, where Q1 and Q3 are the 25th and 75th percentiles computed with numpy.percentile defaults.
@ldl_outliers[count] where "count" is an integer.
""", "IQR-rule outlier count on a column named with a unit ('LDL mg/dL').", {"ldl_outliers": None})
def _():
    x = t(B)["LDL mg/dL"].to_numpy()
    q1, q3 = np.percentile(x, 25), np.percentile(x, 75)
    i = q3 - q1
    return {"ldl_outliers": int(((x < q1 - 1.5 * i) | (x > q3 + 1.5 * i)).sum())}


# ---------------------------------------------------------------- fuel_economy.csv
C = "fuel_economy.csv"


@q("h43", C, "easy", "single_statistic", """
What is the average highway fuel economy? Compute the mean of HwyMPG over all cars and round to two decimal places.
@mean_hwy_mpg[value] where "value" is a number rounded to two decimal places.
""", "Mean of a column named by an abbreviation the question paraphrases.", {"mean_hwy_mpg": 2})
def _():
    return {"mean_hwy_mpg": r(t(C)["HwyMPG"].mean(), 2)}


@q("h44", C, "easy", "single_statistic", """
What is the interquartile range of the curb weight? Use the curb_weight_lbs column; IQR = Q3 minus Q1, with the quartiles from pandas quantile (linear interpolation). Round to one decimal.
@weight_iqr[value] where "value" is a number rounded to one decimal place.
""", "Interquartile range of one column, with its definition restated.", {"weight_iqr": 1})
def _():
    x = t(C)["curb_weight_lbs"]
    return {"weight_iqr": r(x.quantile(0.75) - x.quantile(0.25), 1)}


@q("h45", C, "easy", "correlation", """
Compute the Pearson correlation coefficient between the curb weight (curb_weight_lbs) and the city fuel economy ("city mpg"). Round to three decimals.
@weight_citympg_r[r] where "r" is between -1 and 1 rounded to three decimals.
""", "Pearson r where one column name has a space.", {"weight_citympg_r": 3})
def _():
    d = t(C)
    return {"weight_citympg_r": r(stats.pearsonr(d["curb_weight_lbs"], d["city mpg"])[0], 3)}


@q("h46", C, "medium", "count_filter", """
Among cars from model year 2020 or later, what is the mean HwyMPG of the all-wheel-drive ones (drive equal to "AWD")? Round to two decimals.
@mean_hwy_awd_2020[value] where "value" is rounded to two decimal places.
""", "Mean over a subset defined by a numeric and a text condition.", {"mean_hwy_awd_2020": 2})
def _():
    d = t(C)
    return {"mean_hwy_awd_2020": r(d.loc[(d["ModelYear"] >= 2020) & (d["drive"] == "AWD"), "HwyMPG"].mean(), 2)}


@q("h47", C, "medium", "distribution", """
Is horsepower skewed? Compute the skewness of the hp column, after dropping missing values, with scipy.stats.skew (bias=True, the default), and test normality with scipy.stats.normaltest (D'Agostino and Pearson's test). Report the skewness rounded to three decimals and the normaltest p-value rounded to four decimals.
@hp_skewness[s], @normaltest_p[p]
""", "Skewness plus a named normality test (D'Agostino-Pearson).", {"hp_skewness": 3, "normaltest_p": 4})
def _():
    x = t(C)["hp"].dropna()
    return {"hp_skewness": r(stats.skew(x), 3), "normaltest_p": r(stats.normaltest(x).pvalue, 4)}


@q("h48", C, "medium", "group", """
Calcula la media de emisiones de CO2 (CO2_gpm, gramos por milla) para cada tipo de combustible (columna fuel). ¿Qué tipo de combustible tiene la media más alta? Redondea la media a dos decimales.
@combustible_top[tipo], @media_co2_top[valor] donde "tipo" es un valor de la columna fuel y "valor" un número redondeado a dos decimales.
""", "Group mean and the top group, in Spanish.", {"combustible_top": None, "media_co2_top": 2})
def _():
    g = t(C).groupby("fuel")["CO2_gpm"].mean()
    return {"combustible_top": g.idxmax(), "media_co2_top": r(g.max(), 2)}


# ---------------------------------------------------------------- output
ACCEPT = {
    # A month may be named instead of numbered.
    "h35": {"mes_top": ["november", "noviembre", "nov"]},
}


def build():
    rows = []
    for qd in QUESTIONS:
        ans = qd["fn"]()
        assert set(ans) == set(qd["decimals"]), qd["id"]
        row = {
            "id": qd["id"],
            "table": qd["table"],
            "tier": qd["tier"],
            "kind": qd["kind"],
            "prompt": qd["prompt"],
            "answer": ans,
            "tolerance": {k: tol(d) for k, d in qd["decimals"].items()},
            "why": qd["why"],
        }
        if qd["id"] in ACCEPT:
            row["accept"] = ACCEPT[qd["id"]]
        rows.append(row)
    return rows


def check_set(rows):
    ids = [r_["id"] for r_ in rows]
    assert len(ids) == 48 and len(set(ids)) == 48, "48 distinct ids"
    easy = [r_ for r_ in rows if r_["tier"] == "easy"]
    assert len(easy) == 24, len(easy)
    assert sum(r_["kind"] in ("single_statistic", "correlation") for r_ in easy) >= 16
    for r_ in rows:
        assert os.path.exists(os.path.join(TABLES, r_["table"])), r_["table"]
        assert "@" in r_["prompt"], r_["id"]


def main():
    rows = build()
    check_set(rows)
    text = "".join(json.dumps(r_, ensure_ascii=False) + "\n" for r_ in rows)
    if "--check" in sys.argv:
        old = open(OUT, encoding="utf-8").read()
        if old != text:
            sys.exit("questions.jsonl differs from what answers.py computes")
        print("questions.jsonl matches the tables")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {len(rows)} questions to {OUT}")


if __name__ == "__main__":
    main()
