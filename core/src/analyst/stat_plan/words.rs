//! The words the planner knows: the vocabulary tables (statistics, extremes,
//! comparators, groupings, column synonyms, the words that change what is asked) and
//! small helpers that read the request's words (numbers, phrases).

use super::dates::iso_day_at;
use crate::analyst::request::normalise;

/// Phrases that group by a period of a time column (normalised, whole words).
pub(super) const PERIOD_GROUPS: &[&str] = &[
    "which weekday",
    "which day of the week",
    "which day of week",
    "which month",
    "which hour",
    "which week",
    "which year",
    "which quarter",
    "what weekday",
    "what day of the week",
    "what month",
    "what hour",
    "by weekday",
    "by day of week",
    "by day of the week",
    "by month",
    "by hour",
    "by week",
    "by year",
    "per weekday",
    "per month",
    "per hour",
    "per week",
    "per year",
    "each month",
    "each weekday",
    "each hour",
    "que dia de la semana",
    "que mes",
    "que hora",
    "por dia de la semana",
    "por mes",
    "por hora",
    "por semana",
    "cada mes",
];

/// Statistics by the words that ask for them (normalised, whole words).
pub(super) const STAT_WORDS: &[(&str, &str)] = &[
    ("standard deviation", "std"),
    ("std dev", "std"),
    ("stdev", "std"),
    ("std", "std"),
    ("desviacion estandar", "std"),
    ("desviacion tipica", "std"),
    ("variance", "var"),
    ("varianza", "var"),
    ("interquartile range", "iqr"),
    ("rango intercuartilico", "iqr"),
    ("iqr", "iqr"),
    ("average", "mean"),
    ("mean", "mean"),
    ("promedio", "mean"),
    ("media", "mean"),
    ("valor medio", "mean"),
    ("medio", "mean"),
    ("median", "median"),
    ("mediana", "median"),
    ("most common value", "mode"),
    ("most frequent value", "mode"),
    ("valor mas frecuente", "mode"),
    ("most common", "mode"),
    ("most frequent", "mode"),
    ("mas comun", "mode"),
    ("mas frecuente", "mode"),
    ("percentage of", "share"),
    ("percent of", "share"),
    ("proportion of", "share"),
    ("fraction of", "share"),
    ("share of", "share"),
    ("rate", "share"),
    ("porcentaje de", "share"),
    ("proporcion de", "share"),
    ("tasa de", "share"),
    ("missing values", "missing"),
    ("missing entries", "missing"),
    ("null values", "missing"),
    ("nan values", "missing"),
    ("missing", "missing"),
    ("nulls", "missing"),
    ("valores faltantes", "missing"),
    ("valores nulos", "missing"),
    ("valores vacios", "missing"),
    ("faltantes", "missing"),
    ("mode", "mode"),
    ("moda", "mode"),
    ("minimum", "min"),
    ("min", "min"),
    ("minimo", "min"),
    ("minima", "min"),
    ("maximum", "max"),
    ("max", "max"),
    ("maximo", "max"),
    ("maxima", "max"),
    ("range", "range"),
    ("rango", "range"),
    ("distinct", "distinct"),
    ("unique", "distinct"),
    ("different", "distinct"),
    ("distintos", "distinct"),
    ("distintas", "distinct"),
    ("diferentes", "distinct"),
    ("unicos", "distinct"),
    ("unicas", "distinct"),
    ("how many", "count"),
    ("count", "count"),
    ("number of", "count"),
    ("cuantos", "count"),
    ("cuantas", "count"),
    ("numero de", "count"),
    ("sum", "sum"),
    ("total", "sum"),
    ("suma", "sum"),
    ("skewness", "skew"),
    ("skew", "skew"),
    ("asimetria", "skew"),
    ("kurtosis", "kurt"),
    ("curtosis", "kurt"),
];

/// The values of a yes/no column (as the script reads them).
pub(super) const TRUTHY: &[&str] = &[
    "0",
    "1",
    "0 0",
    "1 0",
    "true",
    "false",
    "yes",
    "no",
    "y",
    "n",
    "t",
    "f",
    "si",
    "s",
    "verdadero",
    "falso",
];

/// Words before "missing values" that say how to handle them, not to count them.
pub(super) const HANDLING: &[&str] = &[
    "ignoring",
    "ignore",
    "excluding",
    "exclude",
    "dropping",
    "drop",
    "without",
    "skipping",
    "skip",
    "omitting",
    "omit",
    "removing",
    "remove",
    "fill",
    "filling",
    "sin",
    "ignorando",
    "excluyendo",
    "descartando",
    "omitiendo",
];
pub(super) const HANDLING_AFTER: &[&str] = &[
    "as", "como", "dropped", "removed", "excluded", "ignored", "omitted",
];

/// Statistics and tests this planner does not compute: named, they are declined.
pub(super) const UNSUPPORTED_STATS: &[&str] = &[
    "geometric mean",
    "harmonic mean",
    "media geometrica",
    "media armonica",
    "weighted",
    "ponderad*",
    "moving average",
    "rolling",
    "media movil",
    "cumulative",
    "acumulad*",
    "t test",
    "significant difference",
    "significantly different",
    "significantly higher",
    "significantly lower",
    "hypothesis",
    "diferencia significativa",
    "ttest",
    "anova",
    "chi square",
    "chi squared",
    "chi cuadrado",
    "regression",
    "regresion",
    "confidence interval",
    "intervalo de confianza",
    "mann whitney",
    "wilcoxon",
    "kendall",
    "anderson",
    "median absolute deviation",
    "entropy",
    "entropia",
    "gini",
    "trimmed",
    "recortada",
    "coefficient of variation",
    "coeficiente de variacion",
    "jarque",
    "lilliefors",
    "impute",
    "imputa*",
    "interpolat*",
    "interpola*",
];

/// An anomaly search (with a time column): the anomaly skill's, never statistics.
pub(super) const ANOMALY_WORDS: &[&str] = &[
    "anomal*",
    "abnormal*",
    "unusual",
    "spike*",
    "anormal*",
    "inusual*",
];

/// Tasks outside every skill: with a statistic in the same request, it is declined.
pub(super) const OUT_OF_SCOPE: &[&str] = &[
    "forecast*",
    "predict*",
    "pronostic*",
    "predec*",
    "predic*",
    "prevision*",
    "translate*",
    "traduc*",
    "poem*",
    "poema*",
    "cluster*",
    "machine learning",
    "classif*",
    "clasific*",
];

pub(super) const QUESTION_WORDS: &[&str] =
    &["which", "what", "who", "cual", "cuales", "que", "quien"];
pub(super) const HIGH_WORDS: &[&str] = &[
    "highest",
    "hottest",
    "warmest",
    "higher",
    "larger",
    "bigger",
    "greater",
    "largest",
    "longest",
    "biggest",
    "greatest",
    "most",
    "mas alto",
    "mas alta",
    "mas altos",
    "mas altas",
    "mas grande",
    "mayor",
    "mayores",
    "mas",
    "maxima",
    "maximo",
    "maximum",
    "max",
];
pub(super) const LOW_WORDS: &[&str] = &[
    "lowest",
    "coldest",
    "cheapest",
    "lower",
    "smaller",
    "smallest",
    "shortest",
    "least",
    "fewest",
    "mas bajo",
    "mas baja",
    "mas bajos",
    "mas bajas",
    "mas pequeno",
    "menor",
    "menores",
    "minima",
    "minimo",
    "minimum",
    "min",
];
pub(super) const GROUP_WORDS: &[&str] = &[
    "by",
    "per",
    "por",
    "each",
    "cada",
    "across",
    "segun",
    "for each",
    "para cada",
];
pub(super) const PERIODS: &[&str] = &[
    "month",
    "months",
    "monthly",
    "mes",
    "meses",
    "week",
    "weeks",
    "weekly",
    "semana",
    "day",
    "days",
    "daily",
    "dia",
    "weekday",
    "hour",
    "hora",
    "quarter",
    "trimestre",
    "year",
    "years",
    "ano",
    "anos",
];
/// Words that introduce a condition the planner must read (else it declines).
pub(super) const CONDITION_WORDS: &[&str] = &[
    "where",
    "whose",
    "only",
    "excluding",
    "except",
    "donde",
    "cuyo",
    "cuya",
    "cuyos",
    "cuyas",
    "solo",
    "solamente",
    "excepto",
    "salvo",
];

/// Comparators: words, the operator, and the column they imply (age for "older").
pub(super) const COMPARATORS: &[(&str, &str, Option<&str>)] = &[
    ("older than", "gt", Some("age")),
    ("younger than", "lt", Some("age")),
    ("at least", "ge", None),
    ("at most", "le", None),
    ("no more than", "le", None),
    ("no less than", "ge", None),
    ("greater than or equal to", "ge", None),
    ("less than or equal to", "le", None),
    ("greater than", "gt", None),
    ("more than", "gt", None),
    ("higher than", "gt", None),
    ("larger than", "gt", None),
    ("bigger than", "gt", None),
    ("above", "gt", None),
    ("over", "gt", None),
    ("exceeding", "gt", None),
    ("less than", "lt", None),
    ("lower than", "lt", None),
    ("smaller than", "lt", None),
    ("fewer than", "lt", None),
    ("below", "lt", None),
    ("under", "lt", None),
    ("equal to", "eq", None),
    ("equals", "eq", None),
    ("exceed", "gt", None),
    ("exceeds", "gt", None),
    ("supera", "gt", None),
    ("superan", "gt", None),
    ("superen", "gt", None),
    ("mayores de", "gt", Some("age")),
    ("mayores que", "gt", None),
    ("mayor de", "gt", Some("age")),
    ("mayor que", "gt", None),
    ("menores de", "lt", Some("age")),
    ("menores que", "lt", None),
    ("menor de", "lt", Some("age")),
    ("menor que", "lt", None),
    ("mas de", "gt", None),
    ("mas que", "gt", None),
    ("menos de", "lt", None),
    ("menos que", "lt", None),
    ("superior a", "gt", None),
    ("superiores a", "gt", None),
    ("inferior a", "lt", None),
    ("inferiores a", "lt", None),
    ("por encima de", "gt", None),
    ("por debajo de", "lt", None),
    ("al menos", "ge", None),
    ("como minimo", "ge", None),
    ("como maximo", "le", None),
    ("igual a", "eq", None),
];

/// Words a request may use for a column's word: abbreviations, and Spanish for the
/// English names of everyday columns (and back).
pub(super) const SYNONYMS: &[(&str, &str)] = &[
    ("quantity", "qty"),
    ("percent", "pct"),
    ("temperature", "temp"),
    ("number", "num"),
    ("amount", "amt"),
    ("pais", "country"),
    ("paises", "country"),
    ("satisfaccion", "satisfaction"),
    ("ciudad", "city"),
    ("ciudades", "city"),
    ("precio", "price"),
    ("edad", "age"),
    ("ventas", "sales"),
    ("ingresos", "revenue"),
    ("unidades", "units"),
    ("cantidad", "quantity"),
    ("temperatura", "temperature"),
    ("humedad", "humidity"),
    ("puntuacion", "score"),
    ("producto", "product"),
    ("categoria", "category"),
    ("coste", "cost"),
    ("costo", "cost"),
    ("clase", "class"),
    ("embarque", "embarked"),
    ("ingresados", "admitted"),
    ("ingresadas", "admitted"),
    ("remotos", "remote"),
    ("remotas", "remote"),
    ("devueltos", "returned"),
    ("devueltas", "returned"),
    ("equipo", "team"),
    ("equipos", "team"),
    ("departamento", "department"),
    ("departamentos", "department"),
    ("categoria", "category"),
    ("categorias", "category"),
    ("estacion", "station"),
    ("lluvias", "rain"),
    ("lluvia", "rain"),
    ("viento", "wind"),
    ("espera", "wait"),
    ("temperatura", "temp"),
    ("temperatura", "temperature"),
    ("rainfall", "rain"),
    ("admission", "admitted"),
    ("admissions", "admitted"),
    ("devoluciones", "returned"),
    ("devolucion", "returned"),
    ("impago", "defaulted"),
    ("impagos", "defaulted"),
    ("default", "defaulted"),
    ("cancelados", "cancelled"),
    ("canceladas", "cancelled"),
    ("cancelado", "cancelled"),
    ("cancelada", "cancelled"),
    ("afluencia", "footfall"),
    ("promocion", "promo"),
    ("promociones", "promo"),
    ("tarifa", "fare"),
    ("visitas", "visits"),
    ("valor", "value"),
    ("fecha", "date"),
    ("tienda", "store"),
    ("almacen", "warehouse"),
    ("cliente", "customer"),
    ("pedido", "order"),
    ("aged", "age"),
    ("genero", "gender"),
    ("sexo", "sex"),
    ("rain", "precipitation"),
    ("rainfall", "precipitation"),
    ("lluvia", "precipitation"),
    ("precipitacion", "precipitation"),
    ("dormitorios", "bedrooms"),
    ("habitaciones", "bedrooms"),
    ("banos", "bathrooms"),
    ("sobrevivieron", "survived"),
    ("sobrevivio", "survived"),
    ("sobrevivientes", "survived"),
    ("supervivientes", "survived"),
    ("devolvieron", "returned"),
    ("devueltos", "returned"),
    ("devuelto", "returned"),
    ("departamento", "department"),
    ("salario", "salary"),
    ("sueldo", "salary"),
    ("descuento", "discount"),
    ("construidas", "built"),
    ("construida", "built"),
    ("construidos", "built"),
    ("construido", "built"),
    ("superficie", "area"),
    ("poblacion", "population"),
    ("esperanza", "expectancy"),
    ("volumen", "volume"),
    ("cierre", "close"),
    ("viento", "wind"),
    ("lectura", "reading"),
    ("escritura", "writing"),
    ("matematicas", "math"),
];

/// Words that change what is asked ("per", "rate", "first", "fill", "only", "not"),
/// left over once the plan is read: each is said back with a few words around it,
/// since a plan that skipped it would answer another question ("average price per
/// square foot" is not the average price).
pub(super) const TRIGGERS: &[&str] = &[
    "per",
    "rate",
    "rates",
    "ratio",
    "proportion",
    "fraction",
    "fill",
    "filling",
    "replace",
    "replacing",
    "impute",
    "only",
    "excluding",
    "except",
    "without",
    "not",
    "never",
    "first",
    "second",
    "third",
    "last",
    "each",
    "every",
    "cumulative",
    "growth",
    "return",
    "returns",
    "increase",
    "decrease",
    "normalized",
    "normalised",
    "log",
    "squared",
    "absolute",
    "missing",
    "null",
    "nulls",
    "nan",
    "empty",
    "unless",
    "weekly",
    "monthly",
    "yearly",
    "annual",
    "annually",
    "between",
    "entre",
    "or",
    "plus",
    "nearest",
    "million",
    "millions",
    "thousand",
    "thousands",
    "hundred",
    "hundreds",
    "millon",
    "millones",
    "miles",
    "summer",
    "winter",
    "spring",
    "autumn",
    "verano",
    "invierno",
    "primavera",
    "otono",
    "rank",
    "ranked",
    "ranking",
    "sort",
    "sorted",
    "ordena*",
    "clasifica*",
    "compared",
    "compare",
    "versus",
    "vs",
    "tasa",
    "rellena*",
    "reemplaz*",
    "sustitu*",
    "solo",
    "solamente",
    "excepto",
    "salvo",
    "sin",
    "no",
    "nunca",
    "primer*",
    "segund*",
    "tercer*",
    "ultim*",
    "cada",
    "acumulad*",
    "crecimiento",
    "aumento",
    "disminucion",
    "faltantes",
    "nulos",
    "vacios",
    "mensual*",
    "semanal*",
    "anual*",
];

/// The request's words: normalised, with decimals kept ("2.5" stays one word) and
/// arithmetic signs spelled out.
/// The word index at which each sentence after the first starts (a sentence ends at
/// ".", "?", "!" or ";" before a space, so "2.5" is no end).
pub(super) fn sentence_starts(text: &str) -> Vec<usize> {
    let chars: Vec<char> = text.chars().collect();
    let mut starts = Vec::new();
    let mut from = 0;
    for i in 0..chars.len() {
        let end = ['.', '?', '!', ';'].contains(&chars[i])
            && chars.get(i + 1).is_none_or(|c| c.is_whitespace());
        if end {
            let before: String = chars[..=i].iter().collect();
            let n = words_of(&before).len();
            if n > from {
                starts.push(n);
                from = n;
            }
        }
    }
    starts
}

pub(super) fn words_of(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut skip = 0;
    for (i, &c) in chars.iter().enumerate() {
        if skip > 0 {
            skip -= 1;
            continue;
        }
        // An ISO day ("2020-06-01") is one word, "iso20200601".
        if let Some(day) = iso_day_at(&chars, i) {
            out.push_str(&format!(" iso{} ", day.iso().replace('-', "")));
            skip = 9;
            continue;
        }
        let digit_at = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(char::is_ascii_digit)
        };
        match c {
            '.' | ',' if digit_at(i.checked_sub(1)) && digit_at(Some(i + 1)) => out.push('d'),
            '*' | '\u{d7}' => out.push_str(" times "),
            '/' | '\u{f7}' => out.push_str(" divided by "),
            '=' => out.push_str(" is "),
            '>' => out.push_str(" greater than "),
            '<' => out.push_str(" less than "),
            '-' if chars.get(i + 1) == Some(&' ') && i > 0 && chars[i - 1] == ' ' => {
                out.push_str(" minus ")
            }
            c => out.push(c),
        }
    }
    let n = format!(" {} ", normalise(&out))
        .replace(" por favor ", " ")
        .replace(" please ", " ")
        .replace(" square feet ", " sqft ")
        .replace(" square foot ", " sqft ")
        .replace(" sq ft ", " sqft ");
    n.split_whitespace().map(str::to_string).collect()
}

/// A number word ("30", "2d5" for 2.5, "two").
fn number(w: &str) -> Option<f64> {
    let names = [
        ("zero", 0.0),
        ("one", 1.0),
        ("two", 2.0),
        ("three", 3.0),
        ("four", 4.0),
        ("five", 5.0),
        ("cero", 0.0),
        ("uno", 1.0),
        ("una", 1.0),
        ("dos", 2.0),
        ("tres", 3.0),
        ("cuatro", 4.0),
        ("cinco", 5.0),
    ];
    names.iter().find(|(n, _)| *n == w).map(|(_, v)| *v)
}

/// A number written in digits ("30", "2d5", "90th").
pub(super) fn digits(w: &str) -> Option<f64> {
    let core = ["th", "st", "nd", "rd", "o", "a"]
        .iter()
        .find_map(|s| {
            w.strip_suffix(s)
                .filter(|c| c.chars().all(|ch| ch.is_ascii_digit() || ch == 'd'))
        })
        .unwrap_or(w);
    if core.is_empty() || !core.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    core.replacen('d', ".", 1).parse().ok()
}

pub(super) fn num(w: &str) -> Option<f64> {
    digits(w).or_else(|| number(w))
}

/// Positions where `phrase` (normalised words; a trailing `*` matches a prefix)
/// occurs in `w`.
pub(super) fn find(w: &[String], phrase: &str) -> Vec<usize> {
    let p: Vec<&str> = phrase.split(' ').collect();
    if p.is_empty() || w.len() < p.len() {
        return Vec::new();
    }
    (0..=w.len() - p.len())
        .filter(|&i| {
            p.iter()
                .enumerate()
                .all(|(k, pw)| match pw.strip_suffix('*') {
                    Some(stem) => w[i + k].starts_with(stem),
                    None => w[i + k] == *pw,
                })
        })
        .collect()
}

pub(super) fn has(w: &[String], phrase: &str) -> bool {
    !find(w, phrase).is_empty()
}

pub(super) fn has_any(w: &[String], phrases: &[&str]) -> bool {
    phrases.iter().any(|p| has(w, p))
}

/// Words for the rows themselves ("the most passengers", "remote employees").
pub(super) const ROW_NOUNS: &[&str] = &[
    "passengers",
    "people",
    "persons",
    "customers",
    "clients",
    "students",
    "pupils",
    "employees",
    "workers",
    "staff",
    "orders",
    "houses",
    "homes",
    "properties",
    "listings",
    "transactions",
    "trips",
    "flights",
    "users",
    "patients",
    "players",
    "games",
    "movies",
    "films",
    "books",
    "products",
    "items",
    "cars",
    "songs",
    "tickets",
    "members",
    "visits",
    "records",
    "rows",
    "entries",
    "cases",
    "events",
    "pasajeros",
    "personas",
    "clientes",
    "estudiantes",
    "alumnos",
    "empleados",
    "trabajadores",
    "pedidos",
    "casas",
    "viviendas",
    "usuarios",
    "pacientes",
    "jugadores",
    "filas",
    "registros",
    "productos",
    "billetes",
    "visitas",
];
