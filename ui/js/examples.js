// The reference request (examples/anomaly_task.md), offered as an example.

export const REFERENCE_PROMPT = `Analyse input/building_energy.csv, an hourly export from our building's energy meter
(columns timestamp, energy_kwh and outdoor_temp_c).

Look for abnormal energy-use events and ignore normal operating noise. First inspect the
file (rows, columns, data types, missing values), then build an expected baseline (for
example by hour of week and outdoor temperature), compute residuals and robust z-scores,
and group unusual readings into events.

Explain the method you used. For every event give its start and end time, how much
energy it used compared with what was expected, and a plausible explanation based on the
timestamps, energy values and outdoor temperature. Use plain ASCII only (write "deg C",
no special symbols).

Save:
- output/anomalies.csv - one row per abnormal event
- output/energy_anomalies.png - a chart of energy use with the events marked
- output/anomaly_report.md - a short report: data, method, events with explanations, limitations

Check that the three files open correctly before you finish.`;
