import numpy as np
import pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

df = pd.read_csv("input/building_energy.csv", parse_dates=["timestamp"])
print("rows", len(df), "columns", list(df.columns), "missing", int(df.isna().sum().sum()))
df["how"] = df.timestamp.dt.dayofweek * 24 + df.timestamp.dt.hour
base = df.groupby("how").energy_kwh.transform("median")
resid = df.energy_kwh - base
mad = 1.4826 * (resid - resid.median()).abs().median()
df["expected_kwh"] = base
df["z"] = (resid - resid.median()) / mad
flag = df.z.abs() >= 3.5
events = []
for _, r in df[flag].iterrows():
    if events and r.timestamp - events[-1]["end"] <= pd.Timedelta(hours=2):
        events[-1]["end"] = r.timestamp
        events[-1]["rows"].append(r)
    else:
        events.append({"start": r.timestamp, "end": r.timestamp, "rows": [r]})
out = pd.DataFrame([{
    "start": e["start"].strftime("%Y-%m-%d %H:%M"),
    "end": e["end"].strftime("%Y-%m-%d %H:%M"),
    "energy_kwh": round(sum(x.energy_kwh for x in e["rows"]), 1),
    "expected_kwh": round(sum(x.expected_kwh for x in e["rows"]), 1),
    "max_abs_z": round(max(abs(x.z) for x in e["rows"]), 1),
    "mean_outdoor_temp_c": round(float(np.mean([x.outdoor_temp_c for x in e["rows"]])), 1),
} for e in events if len(e["rows"]) >= 2 or max(abs(x.z) for x in e["rows"]) >= 6])
out.to_csv("output/anomalies.csv", index=False)
fig, ax = plt.subplots(figsize=(10, 4))
ax.plot(df.timestamp, df.energy_kwh, lw=0.6, label="energy_kwh")
ax.plot(df.timestamp, df.expected_kwh, lw=0.6, label="baseline")
for _, e in out.iterrows():
    ax.axvspan(pd.Timestamp(e.start), pd.Timestamp(e.end), color="red", alpha=0.3)
ax.legend()
fig.savefig("output/energy_anomalies.png", dpi=80)
lines = ["# Energy anomalies", "", "Method: baseline = median by hour of week; residuals scaled to robust z-scores (1.4826 x MAD); |z| >= 3.5 grouped into events.", ""]
for _, e in out.iterrows():
    lines.append(f"- {e.start} to {e.end}: {e.energy_kwh} kWh vs {e.expected_kwh} expected, outdoor {e.mean_outdoor_temp_c} deg C")
open("output/anomaly_report.md", "w").write("\n".join(lines) + "\n")
print("events", len(out))
print(out.to_string())
