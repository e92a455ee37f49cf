//! What the user reads of a plan: its parts as a decline says them, a statistic's
//! name, and the decline itself.

use super::{Decline, Stat, StatPlan, Task};
use crate::analyst::profile::Table;
use crate::analyst::request::Lang;

/// The parts of a plan as the decline says them ("mean", "of `price`", "by `region`").
pub(in crate::analyst) fn described(plan: &StatPlan, lang: Lang) -> Vec<String> {
    let mut out: Vec<String> = plan.stats.iter().map(|s| stat_word(s, lang)).collect();
    match (plan.task, lang) {
        (Task::Argmax, Lang::En) => out.push("the label with the highest value".into()),
        (Task::Argmax, Lang::Es) => out.push("la etiqueta con el valor más alto".into()),
        (Task::Argmin, Lang::En) => out.push("the label with the lowest value".into()),
        (Task::Argmin, Lang::Es) => out.push("la etiqueta con el valor más bajo".into()),
        (Task::Correlation, _) => out.push(plan.method.unwrap_or("pearson").to_string()),
        (Task::Outliers, Lang::En) => out.push("outliers".into()),
        (Task::Outliers, Lang::Es) => out.push("valores atípicos".into()),
        (Task::Normality, Lang::En) => out.push("normality".into()),
        (Task::Normality, Lang::Es) => out.push("normalidad".into()),
        (Task::Describe, _) => {}
    }
    let of = lang.pick("of", "de");
    let by = lang.pick("by", "por");
    for m in &plan.measures {
        out.push(format!("{of} `{}`", m.name));
    }
    if let Some(g) = &plan.group {
        out.push(format!("{by} `{g}`"));
    }
    for f in &plan.filters {
        let rhs = match (&f.date, f.stat, &f.of) {
            _ if f.op == "in" || f.op == "not_in" => f.values.join(" / "),
            _ if f.op == "is_true" || f.op == "is_false" => {
                out.push(format!("`{}` {}", f.column, f.op));
                continue;
            }
            (Some(d), _, _) => d.clone(),
            (_, Some(st), Some(of)) => format!("{} `{of}`", stat_word(&Stat::plain(st), lang)),
            _ => fmt_value(f.value),
        };
        out.push(format!("`{}` {} {rhs}", f.column, f.op));
    }
    out
}

/// A statistic as said in the answer.
pub(super) fn stat_word(s: &Stat, lang: Lang) -> String {
    let (en, es) = match s.name {
        "mean" => ("mean", "media"),
        "median" => ("median", "mediana"),
        "mode" => ("mode", "moda"),
        "std" => ("standard deviation", "desviación estándar"),
        "var" => ("variance", "varianza"),
        "min" => ("minimum", "mínimo"),
        "max" => ("maximum", "máximo"),
        "range" => ("range", "rango"),
        "iqr" => ("interquartile range", "rango intercuartílico"),
        "count" => ("count", "recuento"),
        "distinct" => ("distinct count", "valores distintos"),
        "sum" => ("sum", "suma"),
        "skew" => ("skewness", "asimetría"),
        "kurt" => ("kurtosis", "curtosis"),
        "cv" => ("coefficient of variation", "coeficiente de variación"),
        "sem" => ("standard error of the mean", "error estándar de la media"),
        "missing" => ("number of missing values", "número de valores vacíos"),
        "share" => ("share of the rows", "porcentaje de las filas"),
        "quantile" => {
            let p = s.q.unwrap_or(0.5) * 100.0;
            let p = fmt_value((p * 100.0).round() / 100.0);
            return lang.pick(format!("{p} percentile"), format!("percentil {p}"));
        }
        other => (other, other),
    };
    lang.pick(en, es).into()
}

/// The honest decline: what was understood, what not, and what the analyst can do.
pub(in crate::analyst) fn decline_text(d: &Decline, table: &Table, lang: Lang) -> String {
    let columns: Vec<String> = table
        .column_kinds
        .iter()
        .map(|c| format!("`{}` ({})", c.name, c.kind))
        .collect();
    let columns = if columns.is_empty() {
        table
            .column_names
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        columns.join(", ")
    };
    let understood = if d.understood.is_empty() {
        "-".to_string()
    } else {
        d.understood.join(", ")
    };
    let missing = d
        .not_understood
        .iter()
        .map(|s| s.trim_end_matches('.'))
        .collect::<Vec<_>>()
        .join("; ");
    match lang {
        Lang::En => format!(
            "I cannot answer that as asked, and I will not answer a different question instead.\n\n\
- What I understood: {understood}.\n\
- What I could not: {missing}.\n\n\
The table {} has these columns: {columns}.\n\n\
What I can do: mean, median, mode, standard deviation and variance (sample by default, population when asked), \
minimum, maximum, range, quantiles, count, distinct count, sum, skewness and kurtosis of a column or of a measure \
derived from two (\"revenue is units times unit_price\", \"days between start and end\"), optionally by a category \
and under conditions (\"older than 30\", \"in 2019\", \"before March 2022\", \"in Q3\", \"above the median\"); which label has the highest or lowest value; correlation \
(Pearson or Spearman) with its p-value; outliers by IQR or z-score; normality by skewness, Shapiro-Wilk or \
Kolmogorov-Smirnov. Ask again naming the statistic and the column, e.g. \"mean and standard deviation of price\".\n\n\
(Built-in offline analyst: rule-based, not an LLM. For other questions configure a model: --model openai:MODEL \
with OPENAI_API_KEY, --model anthropic:MODEL with ANTHROPIC_API_KEY, or --model ollama:MODEL; in the desktop app, Settings.)",
            table.path
        ),
        Lang::Es => format!(
            "No puedo responder a eso tal como está pedido, y no responderé a otra pregunta en su lugar.\n\n\
- Lo que entendí: {understood}.\n\
- Lo que no pude entender: {missing}.\n\n\
La tabla {} tiene estas columnas: {columns}.\n\n\
Lo que sé hacer: media, mediana, moda, desviación estándar y varianza (muestrales por defecto, poblacionales si se pide), \
mínimo, máximo, rango, cuantiles, recuento, valores distintos, suma, asimetría y curtosis de una columna o de una medida \
derivada de dos (\"ingresos es unidades por precio\", \"días entre inicio y fin\"), por categoría si se pide y con \
condiciones (\"mayores de 30\", \"en 2019\", \"antes de marzo de 2022\", \"en el tercer trimestre\", \"por encima de la mediana\"); qué etiqueta tiene el valor más alto o más bajo; correlación (Pearson o \
Spearman) con su valor p; valores atípicos por IQR o puntuación z; normalidad por asimetría, Shapiro-Wilk o \
Kolmogorov-Smirnov. Vuelva a preguntar nombrando la estadística y la columna, por ejemplo \"media y desviación estándar del precio\".\n\n\
(Analista sin conexión integrado: basado en reglas, no un LLM. Para otras preguntas configure un modelo: --model openai:MODELO \
con OPENAI_API_KEY, --model anthropic:MODELO con ANTHROPIC_API_KEY o --model ollama:MODELO; en la aplicación, Ajustes.)",
            table.path
        ),
    }
}

pub(super) fn fmt_value(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}
