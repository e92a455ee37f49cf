//! The anomaly skill's words: what it says while it works and its final message, in
//! the request's language. One builder each, written once, and one table of words per
//! language ([`EN`], [`ES`]); the numbers and the events come from the analysis result
//! (`SANDALYST_RESULT` of `analyse.py`, whose texts, such as when an event happened,
//! are already in the request's language), so the languages differ only in words.
//!
//! The report and the chart are written by `analyse.py` from its own table
//! (`anomaly_texts.py`), which also holds the words of the events' explanations.

use serde_json::Value;

use super::numbers::{fmt_num, num};
use super::outputs::OutputNames;
use super::profile::{NoTarget, Profile, Target, MIN_ROWS};
use super::request::Lang;

/// The words of one language. `{}` marks where a value goes, in order ([`fill`]).
pub(super) struct Words {
    pub step1: &'static str,
    step2: &'static str,
    unit: &'static str,
    temperature: &'static str,
    no_temperature: &'static str,
    several: &'static str,
    step2_end: &'static str,
    adjusted: &'static str,
    pub step3: &'static str,
    pub fallback_step: &'static str,
    analysed: &'static str,
    every: &'static str,
    fallback_note: &'static str,
    none: &'static str,
    found: [&'static str; 2],
    event: &'static str,
    cause: &'static str,
    more: &'static str,
    ignored: [&'static str; 2],
    files: &'static str,
    energy: &'static str,
    temperature_column: &'static str,
    points: &'static str,
    valid: &'static str,
    problems: &'static str,
    not_validated: &'static str,
    footer: &'static str,
    and_temperature: &'static str,
    on_site: &'static str,
    also_inspected: &'static str,
    // when there is nothing to analyse, or a step fails
    no_files: &'static str,
    no_tables: &'static str,
    file_seen: &'static str,
    tables_tail: &'static str,
    no_series: &'static str,
    sheet: &'static str,
    table_seen: &'static str,
    no_time: &'static str,
    no_measure: &'static str,
    few_rows: &'static str,
    series_tail: &'static str,
    pub inspect_retry: &'static str,
    pub inspect_failed: &'static str,
    pub not_completed: &'static str,
    pub both_failed: &'static str,
    pub step_failed: &'static str,
    pub may_be_missing: &'static str,
    pub no_result: &'static str,
    pub stopped: &'static str,
}

pub(super) const EN: Words = Words {
    step1: "Step 1 of 4: inspecting the files in input/ (rows, columns, types, missing values, \
            time range). I am the built-in offline analyst: rule-based, not an LLM.",
    step2: "Step 2 of 4: analysing {} ({} rows): time column `{}`, measure `{}`",
    unit: " ({})",
    temperature: ", outdoor temperature `{}` (deg {})",
    no_temperature: ", no temperature column",
    several: ", several `{}` values (the most frequent is analysed)",
    step2_end: ". Baseline by time of week{}, robust z-scores, events, then {}, {} and {}.",
    adjusted: " adjusted for temperature",
    step3: "Step 3 of 4: checking the outputs ({}, {}, {}).",
    fallback_step: "The analysis failed ({}). Falling back once to a simplified analysis: \
                    time-of-week baseline without the temperature model.",
    analysed: "I analysed {} ({} rows): `{}`, {} from {} to {} ({} missing). Expected values come \
               from {}; readings with |robust z| >= {} were flagged and grouped into events.\n\n",
    every: "readings every {}",
    fallback_note: "Note: the full analysis failed ({}), so these results come from the simplified \
                    fallback without temperature adjustment.\n\n",
    none: "No abnormal events were found: nothing deviated from the expected baseline beyond the \
           thresholds.",
    found: ["Found {} abnormal event:\n", "Found {} abnormal events:\n"],
    event: "{}. {} ({}): {}, peak {} vs {} expected (z {}), excess {} {}",
    cause: " -> {}",
    more: "... and {} more in the table.\n",
    ignored: [
        "\n{} other short deviation crossed the flag threshold but was ignored as normal \
         operating noise (single readings with |z| < 6, or too small to matter); the report lists them.\n",
        "\n{} other short deviations crossed the flag threshold but were ignored as normal \
         operating noise (single readings with |z| < 6, or too small to matter); the report lists them.\n",
    ],
    files: "\nFiles:\n- {}: the event table (one row per event, with times, peak, expected value, \
            z-score, excess{}{} and explanation)\n- {}: the chart (measured vs expected with the \
            events shaded, z-scores{})\n- {}: the report (data, method, events with explanations, \
            limitations)\n",
    energy: " energy",
    temperature_column: ", temperature",
    points: "- {}: every reading inside an event with its expected value and z-score\n",
    valid: "\nValidation: all outputs reopened and checked (CSV columns and rows, PNG image, ASCII \
            report covering the method and every event).\n",
    problems: "\nValidation found problems:\n",
    not_validated: "\nThe validation step could not run ({}); the files were written but not \
                    re-checked.\n",
    footer: "\n(Built-in offline analyst: deterministic and rule-based, not an LLM. The explanations \
             are plausible causes inferred from timestamps, values{}; confirm them{}.)",
    and_temperature: " and outdoor temperature",
    on_site: " on site",
    also_inspected: "\n\nAlso inspected but not analysed: {}. I analyse one time series per run; \
                     name the file in the task to analyse another one.",
    no_files: "I found no files under input/, so there is nothing to analyse. Add a data file (CSV, \
               Excel, JSON or Parquet) to the run and start it again.",
    no_tables: "I found no readable tabular data under input/, so there is nothing to analyse. Files \
                seen:\n",
    file_seen: "- {} ({})\n",
    tables_tail: "The built-in offline analyst reads CSV/TSV, Excel, JSON and Parquet tables; for other \
                  files configure an LLM provider.",
    no_series: "I inspected the input but found no time series I can analyse:\n",
    sheet: "{} [sheet {}]",
    table_seen: "- {}: {} rows, {}\n",
    no_time: "no column parses as dates/times",
    no_measure: "no usable numeric measure column",
    few_rows: "only {} rows (at least {} needed)",
    series_tail: "The built-in offline analyst looks for abnormal events in a numeric measure over time \
                  (a time column plus a numeric column). For other analyses configure an LLM provider.",
    inspect_retry: "The inspection did not produce a profile ({}). Trying once more.",
    inspect_failed: "I could not inspect the input files: the inspection step failed twice ({}). No \
                     analysis was done and no output files were written.",
    not_completed: "I could not complete the analysis. ",
    both_failed: "The full analysis failed ({}) and the simplified fallback failed too ({}).",
    step_failed: "The analysis step failed ({}).",
    may_be_missing: " The files {}, {} and {} may be missing or incomplete. The inspection above shows \
                     what was found in the input.",
    no_result: "I could not find the analysis result to summarise; see the steps above.",
    stopped: "I stopped after {} steps without completing the analysis (last step: {}, {}). This \
              should not happen; please report it.",
};

pub(super) const ES: Words = Words {
    step1: "Paso 1 de 4: reviso los archivos de input/ (filas, columnas, tipos, valores vacíos, \
            periodo). Soy el analista sin conexión integrado: basado en reglas, no un LLM.",
    step2: "Paso 2 de 4: analizo {} ({} filas): columna de tiempo `{}`, medida `{}`",
    unit: " ({})",
    temperature: ", temperatura exterior `{}` (deg {})",
    no_temperature: ", sin columna de temperatura",
    several: ", varios valores de `{}` (se analiza el más frecuente)",
    step2_end: ". Valor esperado por franja de la semana{}, z robustos, eventos, y luego {}, {} y {}.",
    adjusted: " ajustado por temperatura",
    step3: "Paso 3 de 4: compruebo los archivos ({}, {}, {}).",
    fallback_step: "El análisis falló ({}). Pruebo una vez un análisis simplificado: valor esperado \
                    por franja de la semana, sin el modelo de temperatura.",
    analysed: "Analicé {} ({} filas): `{}`, {} de {} a {} ({} vacías). Los valores esperados salen \
               de {}; las lecturas con |z robusto| >= {} se marcaron y se agruparon en eventos.\n\n",
    every: "lecturas cada {}",
    fallback_note: "Nota: el análisis completo falló ({}); estos resultados son del análisis \
                    simplificado, sin ajuste por temperatura.\n\n",
    none: "No se encontraron eventos anómalos: nada se apartó de lo esperado más allá de los \
           umbrales.\n",
    found: [
        "Encontré {} evento anómalo:\n",
        "Encontré {} eventos anómalos:\n",
    ],
    event: "{}. {} ({}): {}, máximo {} frente a {} esperado (z {}), exceso {} {}",
    cause: " -> causa probable: {}",
    more: "... y {} más en la tabla.\n",
    ignored: [
        "\n{} desviación corta más cruzó el umbral pero se ignoró como ruido normal (lecturas \
         aisladas con |z| < 6, o demasiado pequeñas); el informe la enumera.\n",
        "\nOtras {} desviaciones cortas cruzaron el umbral pero se ignoraron como ruido normal \
         (lecturas aisladas con |z| < 6, o demasiado pequeñas); el informe las enumera.\n",
    ],
    files: "\nArchivos:\n- {}: la tabla de eventos (una fila por evento, con horas, máximo, valor \
            esperado, z, exceso{}{} y explicación)\n- {}: el gráfico (medido frente a esperado con \
            los eventos sombreados, z{})\n- {}: el informe (datos, método, eventos con \
            explicaciones, limitaciones)\n",
    energy: " de energía",
    temperature_column: ", temperatura",
    points: "- {}: cada lectura dentro de un evento con su valor esperado y su z\n",
    valid: "\nValidación: todos los archivos se reabrieron y comprobaron (columnas y filas del CSV, \
            imagen PNG, informe con el método y cada evento).\n",
    problems: "\nLa validación encontró problemas:\n",
    not_validated: "\nLa validación no pudo ejecutarse ({}); los archivos se escribieron sin \
                    comprobar.\n",
    footer: "\n(Analista sin conexión integrado: determinista y basado en reglas, no un LLM. Las \
             causas son explicaciones plausibles a partir de las horas, los valores{}; confírmelas{}.)",
    and_temperature: " y la temperatura exterior",
    on_site: " en el lugar",
    also_inspected: "\n\nTambién revisé, sin analizarlos: {}. Analizo una serie temporal por \
                     petición; nombre el archivo en la petición para analizar otro.",
    no_files: "No encontré archivos en input/, así que no hay nada que analizar. Añada un archivo de \
               datos (CSV, Excel, JSON o Parquet) y vuelva a empezar.",
    no_tables: "No encontré datos en tablas legibles en input/, así que no hay nada que analizar. \
                Archivos vistos:\n",
    file_seen: "- {} ({})\n",
    tables_tail: "El analista sin conexión integrado lee tablas CSV/TSV, Excel, JSON y Parquet; para \
                  otros archivos configure un proveedor de LLM.",
    no_series: "Revisé los datos pero no encontré ninguna serie temporal que pueda analizar:\n",
    sheet: "{} [hoja {}]",
    table_seen: "- {}: {} filas, {}\n",
    no_time: "ninguna columna se lee como fechas u horas",
    no_measure: "ninguna columna numérica utilizable como medida",
    few_rows: "solo {} filas (hacen falta al menos {})",
    series_tail: "El analista sin conexión integrado busca eventos anómalos en una medida numérica a lo \
                  largo del tiempo (una columna de tiempo y una numérica). Para otros análisis configure \
                  un proveedor de LLM.",
    inspect_retry: "La revisión de los archivos no dio un perfil ({}). Lo intento una vez más.",
    inspect_failed: "No pude revisar los archivos: la revisión falló dos veces ({}). No se hizo ningún \
                     análisis ni se escribió ningún archivo.",
    not_completed: "No pude completar el análisis. ",
    both_failed: "El análisis completo falló ({}) y el simplificado de respaldo también ({}).",
    step_failed: "El paso de análisis falló ({}).",
    may_be_missing: " Los archivos {}, {} y {} pueden faltar o estar incompletos. La revisión de arriba \
                     muestra lo que se encontró en los datos.",
    no_result: "No encontré el resultado del análisis para resumirlo; vea los pasos de arriba.",
    stopped: "Me detuve tras {} pasos sin completar el análisis (último paso: {}, {}). Esto no \
              debería pasar; por favor, infórmelo.",
};

/// The table of `lang`.
pub(super) fn words(lang: Lang) -> &'static Words {
    lang.pick(&EN, &ES)
}

/// `template` with each `{}` replaced by the next of `values`.
pub(super) fn fill(template: &str, values: &[&str]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    let mut values = values.iter();
    while let Some(at) = rest.find("{}") {
        out.push_str(&rest[..at]);
        out.push_str(values.next().copied().unwrap_or(""));
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}

/// Why there is nothing to analyse, with what was found.
pub(super) fn no_target_text(w: &Words, profile: &Profile, why: NoTarget) -> String {
    match why {
        NoTarget::EmptyInput => w.no_files.to_string(),
        NoTarget::NoReadableTable => {
            let mut s = w.no_tables.to_string();
            for f in profile.files.iter().take(20) {
                let why = f.reason.as_deref().unwrap_or(&f.status);
                s.push_str(&fill(w.file_seen, &[&f.path, why]));
            }
            s.push_str(w.tables_tail);
            s
        }
        NoTarget::NoTimeSeries => {
            let mut s = w.no_series.to_string();
            for t in profile.tables.iter().take(20) {
                let name = match &t.sheet {
                    Some(sheet) => fill(w.sheet, &[&t.path, sheet]),
                    None => t.path.clone(),
                };
                let rows = t.rows.to_string();
                let why = if t.time.is_empty() {
                    w.no_time.to_string()
                } else if t.measures.is_empty() {
                    w.no_measure.to_string()
                } else {
                    fill(w.few_rows, &[&rows, &MIN_ROWS.to_string()])
                };
                s.push_str(&fill(w.table_seen, &[&name, &rows, &why]));
            }
            s.push_str(w.series_tail);
            s
        }
    }
}

/// What the analyst says when the analysis starts.
pub(super) fn analysis_narration(w: &Words, target: &Target, outputs: &OutputNames) -> String {
    let t = &target.table;
    let rows = t.rows.to_string();
    let mut s = fill(
        w.step2,
        &[&t.path, &rows, &target.time.name, &target.measure.name],
    );
    if !target.measure.unit.is_empty() {
        s.push_str(&fill(w.unit, &[&target.measure.unit]));
    }
    match &t.temperature {
        Some(temp) => s.push_str(&fill(w.temperature, &[&temp.name, &temp.unit])),
        None => s.push_str(w.no_temperature),
    }
    if let Some(c) = &target.category {
        s.push_str(&fill(w.several, &[c]));
    }
    let adjusted = if t.temperature.is_some() {
        w.adjusted
    } else {
        ""
    };
    s.push_str(&fill(
        w.step2_end,
        &[adjusted, &outputs.csv, &outputs.png, &outputs.md],
    ));
    s
}

/// The note on time series that were inspected but not analysed.
pub(super) fn also_inspected(w: &Words, paths: &[String]) -> String {
    fill(w.also_inspected, &[&paths.join(", ")])
}

/// The final message: the data, the events, the files and the validation.
pub(super) fn final_text(
    w: &Words,
    result: &Value,
    outputs: &OutputNames,
    fallback_reason: Option<&str>,
    validation: &Result<Value, String>,
) -> String {
    let s = |k: &str| result.get(k).and_then(Value::as_str).unwrap_or("");
    let count = |k: &str| result.get(k).and_then(Value::as_u64).unwrap_or(0);
    let with_unit = |x: f64| match s("unit") {
        "" => fmt_num(x),
        unit => format!("{} {unit}", fmt_num(x)),
    };
    let n_events = count("n_events");
    let ignored = count("ignored");
    let cadence = match (s("cadence"), s("interval_word")) {
        ("", "") => fill(w.every, &[s("interval")]),
        ("", word) => format!("{word} readings"),
        (cadence, _) => cadence.to_string(),
    };
    let baseline = match s("baseline_method") {
        "" => s("baseline")
            .trim_start_matches("expected baseline ")
            .trim_matches(['(', ')']),
        method => method,
    };
    let threshold = num(result.get("threshold")).unwrap_or(3.5).to_string();
    let mut t = fill(
        w.analysed,
        &[
            s("input"),
            &count("rows").to_string(),
            s("measure"),
            &cadence,
            s("start"),
            s("end"),
            &count("missing").to_string(),
            baseline,
            &threshold,
        ],
    );
    if let Some(why) = fallback_reason {
        t.push_str(&fill(w.fallback_note, &[why]));
    }
    if n_events == 0 {
        t.push_str(w.none);
    } else {
        let found = w.found[usize::from(n_events != 1)];
        t.push_str(&fill(found, &[&n_events.to_string()]));
        let events = result
            .get("events")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for e in &events {
            t.push_str(&event_line(w, e, &with_unit, s("excess_unit")));
            t.push('\n');
        }
        if (events.len() as u64) < n_events {
            let more = (n_events - events.len() as u64).to_string();
            t.push_str(&fill(w.more, &[&more]));
        }
    }
    if ignored > 0 {
        let ignored_text = w.ignored[usize::from(ignored != 1)];
        t.push_str(&fill(ignored_text, &[&ignored.to_string()]));
    }
    let energy = matches!(s("kind"), "energy" | "power" | "");
    let energy_word = if energy { w.energy } else { "" };
    let has_temperature = !s("temperature").is_empty();
    let temperature = if has_temperature {
        w.temperature_column
    } else {
        ""
    };
    t.push_str(&fill(
        w.files,
        &[
            &outputs.csv,
            energy_word,
            temperature,
            &outputs.png,
            temperature,
            &outputs.md,
        ],
    ));
    if !s("points_csv").is_empty() {
        t.push_str(&fill(w.points, &[s("points_csv")]));
    }
    t.push_str(&validation_text(w, validation));
    let and_temperature = if has_temperature {
        w.and_temperature
    } else {
        ""
    };
    let on_site = if energy { w.on_site } else { "" };
    t.push_str(&fill(w.footer, &[and_temperature, on_site]));
    t
}

/// One event of the final message: when, how long, which way, how big, why.
fn event_line(
    w: &Words,
    e: &Value,
    with_unit: &dyn Fn(f64) -> String,
    excess_unit: &str,
) -> String {
    let es = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
    let n = |k: &str| num(e.get(k)).unwrap_or(f64::NAN);
    let duration = match es("duration_text") {
        "" => format!("{} h", fmt_num(num(e.get("duration_hours")).unwrap_or(0.0))),
        d => d.to_string(),
    };
    let direction = match es("direction_text") {
        "" => es("direction"),
        d => d,
    };
    let excess = n("excess_energy");
    let excess_text = format!("{}{}", if excess > 0.0 { "+" } else { "" }, fmt_num(excess));
    let mut line = fill(
        w.event,
        &[
            &e.get("event_id")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .to_string(),
            es("when"),
            &duration,
            direction,
            &with_unit(n("peak_value")),
            &with_unit(n("expected_at_peak")),
            &format!("{:+.1}", n("peak_z")),
            &excess_text,
            excess_unit,
        ],
    );
    if let Some(p) = num(e.get("excess_pct")) {
        line.push_str(&format!(" ({p:+.0} %)"));
    }
    if !es("cause").is_empty() {
        line.push_str(&fill(w.cause, &[es("cause")]));
    }
    line
}

/// The verdict of the check step.
fn validation_text(w: &Words, validation: &Result<Value, String>) -> String {
    match validation {
        Ok(v) if v.get("ok").and_then(Value::as_bool) == Some(true) => w.valid.to_string(),
        Ok(v) => {
            let mut t = w.problems.to_string();
            let checks = v.get("checks").and_then(Value::as_array);
            for c in checks.into_iter().flatten() {
                if c.get("ok").and_then(Value::as_bool) != Some(true) {
                    t.push_str(&format!(
                        "- {}: {}\n",
                        c.get("name").and_then(Value::as_str).unwrap_or("?"),
                        c.get("detail").and_then(Value::as_str).unwrap_or("")
                    ));
                }
            }
            t
        }
        Err(e) => fill(w.not_validated, &[e]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_puts_values_in_order() {
        assert_eq!(fill("{} of {}", &["a", "b"]), "a of b");
        assert_eq!(fill("no values", &[]), "no values");
        assert_eq!(fill("{} and {}", &["x"]), "x and ");
    }

    #[test]
    fn nothing_to_analyse_is_said_in_the_language_with_what_was_found() {
        let profile = Profile {
            files: vec![super::super::profile::FileEntry {
                path: "input/notes.pdf".into(),
                status: "not tabular".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let es = no_target_text(&ES, &profile, NoTarget::NoReadableTable);
        assert!(
            es.starts_with("No encontré datos en tablas")
                && es.contains("- input/notes.pdf (not tabular)"),
            "{es}"
        );
        let en = no_target_text(&EN, &profile, NoTarget::EmptyInput);
        assert!(en.starts_with("I found no files under input/"), "{en}");
    }

    #[test]
    fn every_language_has_the_same_places_for_values() {
        let places = |w: &Words| {
            [
                w.step1,
                w.step2,
                w.unit,
                w.temperature,
                w.no_temperature,
                w.several,
                w.step2_end,
                w.adjusted,
                w.step3,
                w.fallback_step,
                w.analysed,
                w.every,
                w.fallback_note,
                w.none,
                w.found[0],
                w.found[1],
                w.event,
                w.cause,
                w.more,
                w.ignored[0],
                w.ignored[1],
                w.files,
                w.energy,
                w.temperature_column,
                w.points,
                w.valid,
                w.problems,
                w.not_validated,
                w.footer,
                w.and_temperature,
                w.on_site,
                w.also_inspected,
                w.no_files,
                w.no_tables,
                w.file_seen,
                w.tables_tail,
                w.no_series,
                w.sheet,
                w.table_seen,
                w.no_time,
                w.no_measure,
                w.few_rows,
                w.series_tail,
                w.inspect_retry,
                w.inspect_failed,
                w.not_completed,
                w.both_failed,
                w.step_failed,
                w.may_be_missing,
                w.no_result,
                w.stopped,
            ]
            .map(|t| t.matches("{}").count())
        };
        assert_eq!(places(&EN), places(&ES));
    }
}
