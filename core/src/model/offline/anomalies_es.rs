//! The anomaly skill's final message in Spanish, for a request written in Spanish: the
//! same facts as [`super::final_text`] (the events, their sizes, the files, the
//! validation). The report and the chart of `analyse.py`, and the causes it writes,
//! stay in English (said in the message).

use serde_json::Value;

use super::{fmt_num, num, OutputNames};

const DAYS: [(&str, &str); 7] = [
    ("Monday", "lunes"),
    ("Tuesday", "martes"),
    ("Wednesday", "miércoles"),
    ("Thursday", "jueves"),
    ("Friday", "viernes"),
    ("Saturday", "sábado"),
    ("Sunday", "domingo"),
];

fn spanish_when(when: &str) -> String {
    let mut s = when.replace(" to ", " a ");
    for (en, es) in DAYS {
        s = s.replace(en, es);
    }
    s
}

fn direction(d: &str) -> &str {
    match d {
        "spike" => "pico",
        "drop" => "caída",
        "flat" => "lectura repetida",
        other => other,
    }
}

pub(super) fn final_text_es(
    result: &Value,
    outputs: &OutputNames,
    fallback_reason: Option<&str>,
    validation: &Result<Value, String>,
) -> String {
    let s = |k: &str| {
        result
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let u = match s("unit") {
        unit if unit.is_empty() => String::new(),
        unit => format!(" {unit}"),
    };
    let n_events = result.get("n_events").and_then(Value::as_u64).unwrap_or(0);
    let ignored = result.get("ignored").and_then(Value::as_u64).unwrap_or(0);
    let mut t = format!(
        "Analicé {} ({} filas): `{}`, lecturas cada {} de {} a {} ({} vacías). \
         Los valores esperados salen de la mediana por franja horaria{}; las lecturas con |z robusto| >= {} \
         se marcaron y se agruparon en eventos.\n\n",
        s("input"),
        result.get("rows").and_then(Value::as_u64).unwrap_or(0),
        s("measure"),
        s("interval"),
        s("start"),
        s("end"),
        result.get("missing").and_then(Value::as_u64).unwrap_or(0),
        if s("temperature").is_empty() {
            ""
        } else {
            " y de un modelo de la temperatura exterior"
        },
        num(result.get("threshold")).unwrap_or(3.5),
    );
    if let Some(why) = fallback_reason {
        t.push_str(&format!(
            "Nota: el análisis completo falló ({why}); estos resultados son del análisis simplificado, \
             sin ajuste por temperatura.\n\n"
        ));
    }
    if n_events == 0 {
        t.push_str("No se encontraron eventos anómalos: nada se apartó de lo esperado más allá de los umbrales.\n");
    } else {
        t.push_str(&format!(
            "Encontré {n_events} evento{} anómalo{}:\n",
            if n_events == 1 { "" } else { "s" },
            if n_events == 1 { "" } else { "s" }
        ));
        let events = result
            .get("events")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for e in &events {
            let es = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let excess = num(e.get("excess_energy")).unwrap_or(f64::NAN);
            let mut line = format!(
                "{}. {} ({} h): {}, máximo {}{u} frente a {}{u} esperado (z {:+.1}), exceso {}{} {}",
                e.get("event_id").and_then(Value::as_u64).unwrap_or(0),
                spanish_when(&es("when")),
                fmt_num(num(e.get("duration_hours")).unwrap_or(0.0)),
                direction(&es("direction")),
                fmt_num(num(e.get("peak_value")).unwrap_or(f64::NAN)),
                fmt_num(num(e.get("expected_at_peak")).unwrap_or(f64::NAN)),
                num(e.get("peak_z")).unwrap_or(f64::NAN),
                if excess > 0.0 { "+" } else { "" },
                fmt_num(excess),
                s("excess_unit"),
            );
            if let Some(p) = num(e.get("excess_pct")) {
                line.push_str(&format!(" ({p:+.0} %)"));
            }
            let cause = es("cause");
            if !cause.is_empty() {
                line.push_str(&format!(" -> causa probable (en inglés): {cause}"));
            }
            t.push_str(&line);
            t.push('\n');
        }
        if (events.len() as u64) < n_events {
            t.push_str(&format!(
                "... y {} más en la tabla.\n",
                n_events - events.len() as u64
            ));
        }
    }
    if ignored > 0 {
        t.push_str(&format!(
            "\nOtras {ignored} desviaciones cortas cruzaron el umbral pero se ignoraron como ruido normal \
             (lecturas aisladas con |z| < 6, o demasiado pequeñas); el informe las enumera.\n"
        ));
    }
    t.push_str(&format!(
        "\nArchivos:\n- {}: la tabla de eventos\n- {}: el gráfico (medido frente a esperado)\n- {}: el informe \
         (datos, método, eventos, limitaciones; en inglés)\n",
        outputs.csv, outputs.png, outputs.md
    ));
    match validation {
        Ok(v) if v.get("ok").and_then(Value::as_bool) == Some(true) => {
            t.push_str("\nValidación: todos los archivos se reabrieron y comprobaron.\n");
        }
        Ok(_) => t.push_str("\nLa validación encontró problemas; vea el último paso.\n"),
        Err(e) => t.push_str(&format!(
            "\nLa validación no pudo ejecutarse ({e}); los archivos se escribieron sin comprobar.\n"
        )),
    }
    t.push_str(
        "\n(Analista sin conexión integrado: determinista y basado en reglas, no un LLM. Las causas son \
         explicaciones plausibles a partir de las horas, los valores y la temperatura; confírmelas.)",
    );
    t
}
