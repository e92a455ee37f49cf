use super::text::{fmt_value, stat_word};
use super::words::digits;
use super::*;
use crate::analyst::profile::ColumnKind;
use crate::analyst::request::detect_lang;

fn table(path: &str, rows: u64, cols: &[(&str, &str, u64)]) -> Table {
    Table {
        path: path.into(),
        rows,
        column_names: cols.iter().map(|c| c.0.to_string()).collect(),
        column_kinds: cols
            .iter()
            .map(|(n, k, d)| ColumnKind {
                name: n.to_string(),
                kind: k.to_string(),
                distinct: *d,
                missing: 0,
                ..ColumnKind::default()
            })
            .collect(),
        ..Table::default()
    }
}

fn passengers() -> Table {
    let mut t = table(
        "input/passengers.csv",
        150,
        &[
            ("passenger", "text", 150),
            ("age", "numeric", 70),
            ("fare", "numeric", 140),
            ("class", "text", 3),
            ("boarded", "datetime", 140),
        ],
    );
    // The inspection lists the values of a column with few of them.
    t.column_kinds[3].values = vec!["First".into(), "Second".into(), "Third".into()];
    t
}

fn plan(task: &str, t: &Table) -> StatPlan {
    match understand(task, t, detect_lang(task)) {
        Understood::Plan(p) => *p,
        other => panic!("{task}: {other:?}"),
    }
}

fn names(p: &StatPlan) -> Vec<&str> {
    p.stats.iter().map(|s| s.name).collect()
}

/// "Which weekday uses the most energy on average?" groups by a period of the
/// time column: the aggregate skill's question, never an overall mean and max.
#[test]
fn a_period_of_the_time_column_goes_to_the_aggregate_skill() {
    let mut energy = table(
        "input/building_energy.csv",
        1344,
        &[
            ("timestamp", "datetime", 1344),
            ("energy_kwh", "numeric", 900),
        ],
    );
    energy.time = vec![crate::analyst::profile::TimeCandidate {
        name: "timestamp".into(),
        unit: None,
    }];
    for task in [
        "Which weekday uses the most energy on average? Show a bar chart",
        "What is the mean energy_kwh per month?",
        "¿Qué día de la semana tiene el mayor consumo medio?",
    ] {
        assert_eq!(
            understand(task, &energy, detect_lang(task)),
            Understood::NotMine,
            "{task}"
        );
    }
    // Without that period word it stays a statistic of the whole column.
    let p = plan("What is the mean of energy_kwh?", &energy);
    assert_eq!(names(&p), vec!["mean"]);
}

#[test]
fn several_statistics_of_one_measure() {
    let p = plan(
        "Calculate the mean and standard deviation of the fare",
        &passengers(),
    );
    assert_eq!(
        (p.task, names(&p), p.ddof),
        (Task::Describe, vec!["mean", "std"], 1)
    );
    assert_eq!(p.measures[0].column.as_deref(), Some("fare"));
    let p = plan(
        "What is the population standard deviation of fare?",
        &passengers(),
    );
    assert_eq!(p.ddof, 0);
    let p = plan("What are the quartiles of the fare?", &passengers());
    assert_eq!(
        p.stats.iter().filter_map(|s| s.q).collect::<Vec<_>>(),
        vec![0.25, 0.5, 0.75]
    );
    let p = plan(
        "What is the 90th percentile of fare, rounded to 2 decimals?",
        &passengers(),
    );
    assert_eq!((p.stats[0].q, p.decimals), (Some(0.9), Some(2)));
    let p = plan("How many distinct classes are there?", &passengers());
    assert_eq!(
        (names(&p), p.measures[0].name.as_str()),
        (vec!["distinct"], "class")
    );
}

/// A passenger list as analysts download it: codes and yes/no columns as numbers,
/// the values of the columns with few of them listed by the inspection.
fn boarders() -> Table {
    let mut t = table(
        "input/boarders.csv",
        240,
        &[
            ("PassengerId", "numeric", 240),
            ("Survived", "numeric", 2),
            ("Pclass", "numeric", 3),
            ("Sex", "text", 2),
            ("Age", "numeric", 180),
            ("Fare", "numeric", 200),
            ("Embarked", "text", 3),
            ("lunch", "text", 2),
        ],
    );
    t.column_kinds[0].id = true;
    for (i, values) in [
        (1, &["0", "1"][..]),
        (2, &["1", "2", "3"]),
        (3, &["male", "female"]),
        (6, &["S", "C", "Q"]),
        (7, &["standard", "free/reduced"]),
    ] {
        t.column_kinds[i].values = values.iter().map(|v| v.to_string()).collect();
    }
    t
}

/// Each of these once got an answer to another question; now the plan holds every
/// part of it, or the request is declined.
#[test]
fn every_part_of_the_request_is_in_the_plan() {
    let t = boarders();
    let p = plan("How many passengers survived?", &t);
    assert_eq!(
        (names(&p), p.measures.len(), p.filters[0].op),
        (vec!["count"], 0, "is_true")
    );
    let p = plan("How many passengers did not survive?", &t);
    assert_eq!(p.filters[0].op, "is_false");
    let p = plan("How many missing values are in the Age column?", &t);
    assert_eq!(
        (names(&p), p.measures[0].name.as_str()),
        (vec!["missing"], "Age")
    );
    let p = plan(
        "Mean and standard deviation of Age, ignoring missing values",
        &t,
    );
    assert_eq!(names(&p), vec!["mean", "std"]);
    let p = plan("What is the most common port of embarkation?", &t);
    assert_eq!(
        (names(&p), p.measures[0].name.as_str()),
        (vec!["mode"], "Embarked")
    );
    let p = plan("Which passenger class has the highest average fare?", &t);
    assert_eq!(
        (p.task, p.group.as_deref(), p.label_op),
        (Task::Argmax, Some("Pclass"), Some("mean"))
    );
    let p = plan("What is the median age of passengers in first class?", &t);
    assert_eq!(
        (p.filters[0].column.as_str(), p.filters[0].value),
        ("Pclass", 1.0)
    );
    let p = plan("Average age of female passengers", &t);
    assert_eq!(p.filters[0].values, vec!["female".to_string()]);
    let p = plan("¿Cuál es la edad media de las mujeres?", &t);
    assert_eq!(p.filters[0].values, vec!["female".to_string()]);
    // "standard" of "standard deviation" is not the lunch `standard`.
    let p = plan("What is the standard deviation of Fare?", &t);
    assert!(p.filters.is_empty(), "{:?}", p.filters);
    let p = plan("What percentage of passengers survived?", &t);
    let share = p.share_of.clone().unwrap();
    assert_eq!(
        (names(&p), share.column.as_str(), share.op),
        (vec!["share"], "Survived", "is_true")
    );
    let p = plan("What is the survival rate of female passengers?", &t);
    assert_eq!(
        (
            p.share_of.unwrap().column.as_str(),
            p.filters[0].values.clone()
        ),
        ("Survived", vec!["female".to_string()])
    );
    let p = plan("What percentage of passengers are female?", &t);
    assert_eq!(p.share_of.unwrap().values, vec!["female".to_string()]);
    let p = plan("¿Cuántos pasajeros sobrevivieron?", &t);
    assert_eq!(p.filters[0].op, "is_true");
    // One letter is a value only next to its column.
    let p = plan(
        "What is the maximum age of passengers who embarked at port C?",
        &t,
    );
    assert_eq!(
        (p.task, names(&p), p.filters[0].values.clone()),
        (Task::Describe, vec!["max"], vec!["C".to_string()])
    );
    let p = plan("What is the average fare for each passenger class?", &t);
    assert_eq!(
        (p.group.as_deref(), names(&p)),
        (Some("Pclass"), vec!["mean"])
    );
    // "Which sex ..." asks for the label; it is no yes/no condition.
    let task = "Which sex has the lower survival count?";
    if let Understood::Decline(d) = understand(task, &t, detect_lang(task)) {
        assert!(!d.understood.iter().any(|u| u.contains("`Sex`")), "{d:?}");
    }
    // A name in camel case is read word by word; a number nobody read is no
    // dropped condition: the request is declined.
    let mut staff = table(
        "input/staff.csv",
        180,
        &[
            ("EmployeeID", "text", 180),
            ("PerformanceRating", "numeric", 5),
            ("Salary", "numeric", 170),
            ("discount", "numeric", 3),
        ],
    );
    staff.column_kinds[0].id = true;
    staff.column_kinds[1].values = ["1", "2", "3", "4", "5"].map(String::from).to_vec();
    let p = plan("What is the median salary by performance rating?", &staff);
    assert_eq!(p.group.as_deref(), Some("PerformanceRating"));
    for task in [
        "What is the average salary of employees with a rating of 5 stars?",
        "How many orders had a discount?",
    ] {
        assert!(
            matches!(
                understand(task, &staff, detect_lang(task)),
                Understood::Decline(_)
            ),
            "{task}"
        );
    }
    let p = plan(
        "Are there outliers in Salary based on z-scores above 2.5?",
        &staff,
    );
    assert_eq!((p.task, p.z), (Task::Outliers, 2.5));
    // A word that changes the question and that the plan cannot read: declined.
    for task in [
        "Fill the missing ages with the median age and then report the mean age",
        "What is the mean Fare per passenger class only for those not embarked",
        "What is the average daily return of Fare?",
    ] {
        assert!(
            matches!(
                understand(task, &t, detect_lang(task)),
                Understood::Decline(_)
            ),
            "{task}"
        );
    }
    let homes = table(
        "input/homes.csv",
        160,
        &[
            ("price", "numeric", 160),
            ("area_sqft", "numeric", 150),
            ("bedrooms", "numeric", 6),
            ("year_built", "numeric", 70),
            ("listed_date", "datetime", 150),
            ("sold_date", "datetime", 150),
        ],
    );
    let p = plan("What is the average price per square foot?", &homes);
    let d = p.measures[0].derived.clone().unwrap();
    assert_eq!(
        (d.op, d.a.as_str(), d.b.as_str()),
        ("ratio", "price", "area_sqft")
    );
    let p = plan("How many houses have more than 3 bedrooms?", &homes);
    assert_eq!(
        (p.filters[0].column.as_str(), p.filters[0].op),
        ("bedrooms", "gt")
    );
    let p = plan(
        "What is the average price of houses built after 2000?",
        &homes,
    );
    assert_eq!(
        (
            p.filters[0].column.as_str(),
            p.filters[0].op,
            p.measures.len()
        ),
        ("year_built", "gt", 1)
    );
    let p = plan("What is the price per bedroom on average?", &homes);
    assert_eq!(p.measures[0].derived.clone().unwrap().b, "bedrooms");
    let p = plan(
        "What is the average area_sqft of houses with 2 bedrooms?",
        &homes,
    );
    assert_eq!(
        (
            p.filters[0].column.as_str(),
            p.filters[0].op,
            p.filters[0].value
        ),
        ("bedrooms", "eq", 2.0)
    );
    let p = plan(
        "How many days did it take to sell a house, from listed_date to sold_date, on average?",
        &homes,
    );
    let d = p.measures[0].derived.clone().unwrap();
    assert_eq!(
        (d.op, d.a.as_str(), d.b.as_str()),
        ("days", "sold_date", "listed_date")
    );
}

#[test]
fn conditions_are_read_or_declined() {
    let p = plan(
        "What is the mean fare for passengers older than 30?",
        &passengers(),
    );
    assert_eq!(p.filters, vec![Filter::num("age".into(), "gt", 30.0)]);
    let p = plan("Average fare in 2019", &passengers());
    assert_eq!(
        p.filters,
        vec![Filter::num("boarded".into(), "year", 2019.0)]
    );
    let p = plan("Mean fare where age is at least 60.5", &passengers());
    assert_eq!(p.filters[0].op, "ge");
    assert_eq!(p.filters[0].value, 60.5);
    // A value the inspection listed is a condition the plan names.
    let p = plan("Mean fare for First class passengers", &passengers());
    assert_eq!(
        (p.filters[0].op, p.filters[0].values.clone()),
        ("in", vec!["First".to_string()])
    );
    let p = plan("Mean fare only for the Third class", &passengers());
    assert_eq!(p.filters[0].values, vec!["Third".to_string()]);
    assert!(!p.needs_value_filter);
    for task in [
        "Mean fare for passengers longer than a year",
        "Mean fare for passengers boarded before the war",
    ] {
        assert!(
            matches!(
                understand(task, &passengers(), Lang::En),
                Understood::Decline(_)
            ),
            "{task}"
        );
    }
}

fn ops(p: &StatPlan) -> Vec<(&str, String)> {
    p.filters
        .iter()
        .map(|f| {
            let rhs = match (&f.date, f.stat, &f.of) {
                (Some(d), _, _) => d.clone(),
                (_, Some(st), Some(of)) => format!("{st} {of}"),
                _ => fmt_value(f.value),
            };
            (f.op, format!("{} {rhs}", f.column))
        })
        .collect()
}

#[test]
fn date_ranges_are_read() {
    let t = passengers();
    let cases: &[(&str, &[(&str, &str)])] = &[
        (
            "Mean fare for passengers boarded before March",
            &[("month_before", "boarded 3")],
        ),
        (
            "Median fare after 2020-06-01",
            &[("date_from", "boarded 2020-06-02")],
        ),
        (
            "Mean fare since 2019-12-31",
            &[("date_from", "boarded 2019-12-31")],
        ),
        (
            "Standard deviation of fare until February 2020",
            &[("date_before", "boarded 2020-03-01")],
        ),
        (
            "Mean fare between January and March",
            &[("month_from", "boarded 1"), ("month_to", "boarded 3")],
        ),
        (
            "Mean fare between January and March 2019",
            &[
                ("date_from", "boarded 2019-01-01"),
                ("date_before", "boarded 2019-04-01"),
            ],
        ),
        (
            "Mean fare in Q2",
            &[("month_from", "boarded 4"), ("month_to", "boarded 6")],
        ),
        (
            "Median fare in the first half of 2019",
            &[
                ("date_from", "boarded 2019-01-01"),
                ("date_before", "boarded 2019-07-01"),
            ],
        ),
        (
            "Mean fare from 1 March 2019 to 31 May 2019",
            &[
                ("date_from", "boarded 2019-03-01"),
                ("date_before", "boarded 2019-06-01"),
            ],
        ),
        (
            "Mean fare before 2019",
            &[("date_before", "boarded 2019-01-01")],
        ),
        (
            "Media de fare antes de marzo de 2020",
            &[("date_before", "boarded 2020-03-01")],
        ),
        (
            "Mediana de fare en el segundo trimestre de 2019",
            &[
                ("date_from", "boarded 2019-04-01"),
                ("date_before", "boarded 2019-07-01"),
            ],
        ),
        (
            "Media de fare entre enero y marzo",
            &[("month_from", "boarded 1"), ("month_to", "boarded 3")],
        ),
    ];
    for (task, want) in cases {
        let p = plan(task, &t);
        let want: Vec<(&str, String)> = want.iter().map(|(o, r)| (*o, r.to_string())).collect();
        assert_eq!(ops(&p), want, "{task}");
        assert_eq!(p.measures[0].name, "fare", "{task}");
    }
    // "in March" with a plain mean stays the aggregate skill's question.
    assert_eq!(
        understand("Average fare in March", &t, Lang::En),
        Understood::NotMine
    );
    // A year on a numeric year column.
    let yearly = table(
        "input/yearly.csv",
        64,
        &[("year", "numeric", 8), ("visitors", "numeric", 60)],
    );
    let p = plan("Median visitors before 2019", &yearly);
    assert_eq!(ops(&p), vec![("lt", "year 2019".to_string())]);
}

#[test]
fn comparisons_with_a_statistic_are_read() {
    let t = passengers();
    let p = plan("Mean fare for fares higher than the median", &t);
    assert_eq!(
        (names(&p), ops(&p)),
        (vec!["mean"], vec![("gt", "fare median fare".to_string())])
    );
    let p = plan("How many passengers paid more than the average fare?", &t);
    assert_eq!(
        (names(&p), ops(&p)),
        (vec!["count"], vec![("gt", "fare mean fare".to_string())])
    );
    let p = plan("Median fare of passengers older than the average age", &t);
    assert_eq!(
        (names(&p), ops(&p)),
        (vec!["median"], vec![("gt", "age mean age".to_string())])
    );
    let p = plan(
        "¿Cuántos pasajeros tienen una edad por encima de la media?",
        &t,
    );
    assert_eq!(
        (names(&p), ops(&p)),
        (vec!["count"], vec![("gt", "age mean age".to_string())])
    );
    let survived = table(
        "input/titanic.csv",
        100,
        &[
            ("age", "numeric", 60),
            ("survived", "numeric", 2),
            ("fare", "numeric", 90),
        ],
    );
    let p = plan(
        "What's the median age of passengers who survived?",
        &survived,
    );
    assert_eq!(
        (names(&p), ops(&p), p.measures.len()),
        (
            vec!["median"],
            vec![("is_true", "survived 0".to_string())],
            1
        )
    );
    let p = plan("Mean fare of passengers who did not survive", &survived);
    assert_eq!(ops(&p), vec![("is_false", "survived 0".to_string())]);
}

#[test]
fn a_significance_level_is_read() {
    let s = table("input/s.csv", 200, &[("normal", "numeric", 200)]);
    let p = plan("Shapiro-Wilk test of normal at alpha 0.01", &s);
    assert_eq!((p.alpha, p.alpha_said), (0.01, true));
    let p = plan("Is normal normally distributed at the 10% level?", &s);
    assert_eq!(p.alpha, 0.1);
    let p = plan("Prueba de Shapiro-Wilk de normal", &s);
    assert_eq!((p.alpha, p.alpha_said), (0.05, false));
}

#[test]
fn argmax_and_derived_measures() {
    let cities = table(
        "input/cities.csv",
        12,
        &[("city", "text", 12), ("score", "numeric", 10)],
    );
    let p = plan("Which city has the highest score?", &cities);
    assert_eq!(
        (p.task, p.group.as_deref(), p.label_op),
        (Task::Argmax, Some("city"), None)
    );
    let p = plan("¿Qué city tiene el menor score?", &cities);
    assert_eq!(p.task, Task::Argmin);
    let p = plan("What is the highest score?", &cities);
    assert_eq!((p.task, names(&p)), (Task::Describe, vec!["max"]));
    let orders = table(
        "input/orders.csv",
        80,
        &[
            ("order_id", "text", 80),
            ("region", "text", 4),
            ("units", "numeric", 40),
            ("unit_price", "numeric", 80),
            ("cost", "numeric", 80),
        ],
    );
    let p = plan(
        "Which region had the highest revenue? Revenue is units times unit_price.",
        &orders,
    );
    assert_eq!((p.task, p.group.as_deref()), (Task::Argmax, Some("region")));
    let d = p.measures[0].derived.clone().unwrap();
    assert_eq!(
        (d.op, d.a.as_str(), d.b.as_str()),
        ("product", "units", "unit_price")
    );
    assert_eq!(p.measures[0].name, "revenue");
    let p = plan(
        "What is the mean revenue per order? Revenue = units * unit_price",
        &orders,
    );
    assert_eq!(
        (p.task, p.group.clone(), names(&p)),
        (Task::Describe, None, vec!["mean"])
    );
    let p = plan(
        "Mean of the difference between unit_price and cost",
        &orders,
    );
    assert_eq!(p.measures[0].derived.as_ref().unwrap().op, "difference");
    let p = plan("¿Cuál es la media de cost dividido entre units?", &orders);
    assert_eq!(p.measures[0].derived.as_ref().unwrap().op, "ratio");
    let contracts = table(
        "input/contracts.csv",
        40,
        &[
            ("contract_name", "text", 40),
            ("start_date", "datetime", 40),
            ("end_date", "datetime", 40),
        ],
    );
    let p = plan("What is the average length of a contract?", &contracts);
    let d = p.measures[0].derived.clone().unwrap();
    assert_eq!(
        (d.op, d.a.as_str(), d.b.as_str()),
        ("days", "end_date", "start_date")
    );
    let p = plan(
        "Median number of hours between start_date and end_date",
        &contracts,
    );
    assert_eq!(
        (names(&p), p.measures[0].derived.as_ref().unwrap().op),
        (vec!["median"], "hours")
    );
}

#[test]
fn tests_and_correlations() {
    let t = table(
        "input/s.csv",
        200,
        &[
            ("x", "numeric", 200),
            ("y", "numeric", 200),
            ("code", "numeric", 200),
        ],
    );
    let p = plan("Spearman correlation between x and y", &t);
    assert_eq!(
        (p.task, p.method, p.second.as_deref()),
        (Task::Correlation, Some("spearman"), Some("y"))
    );
    let p = plan("How many outliers does y have by the IQR rule?", &t);
    assert_eq!((p.task, p.method), (Task::Outliers, Some("iqr")));
    let p = plan(
        "Outliers of y more than 2.5 standard deviations from the mean",
        &t,
    );
    assert_eq!((p.method, p.z), (Some("z"), 2.5));
    let p = plan("Is y normally distributed? Use a Shapiro-Wilk test", &t);
    assert_eq!((p.task, p.method), (Task::Normality, Some("shapiro")));
    let p = plan("What is the mean of code?", &t);
    assert_eq!(p.task, Task::Describe);
}

#[test]
fn declines_say_what_was_and_was_not_understood() {
    let d = match understand(
        "What is the geometric mean of fare?",
        &passengers(),
        Lang::En,
    ) {
        Understood::Decline(d) => d,
        other => panic!("{other:?}"),
    };
    assert!(d.not_understood[0].contains("geometric mean"), "{d:?}");
    let text = decline_text(&d, &passengers(), Lang::En);
    assert!(text.contains("I cannot answer that as asked") && text.contains("`fare` (numeric)"));
    for (task, word) in [
        ("What is the mean of ticket_price?", "ticket"),
        ("What is the mean of class?", "text column"),
        ("Media del salario", "salario"),
        ("Mean fare and predict next year's fare", "forecast"),
    ] {
        match understand(task, &passengers(), detect_lang(task)) {
            Understood::Decline(d) => {
                assert!(d.not_understood.join(" ").contains(word), "{task}: {d:?}")
            }
            other => panic!("{task}: {other:?}"),
        }
    }
    let es = match understand("Media del salario", &passengers(), Lang::Es) {
        Understood::Decline(d) => decline_text(&d, &passengers(), Lang::Es),
        other => panic!("{other:?}"),
    };
    assert!(es.starts_with("No puedo responder"));
}

/// The requests of the other skills' fixtures (tests/fixtures/skills) stay theirs.
#[test]
fn other_skills_keep_their_questions() {
    let sales = table(
        "input/sales.csv",
        120,
        &[
            ("date", "datetime", 90),
            ("region", "text", 4),
            ("product", "text", 3),
            ("units", "numeric", 50),
            ("revenue", "numeric", 118),
        ],
    );
    let inventory = table(
        "input/inventory.csv",
        40,
        &[
            ("sku", "text", 40),
            ("product", "text", 40),
            ("category", "text", 4),
            ("warehouse", "text", 3),
            ("stock_qty", "numeric", 30),
            ("unit_cost", "numeric", 40),
        ],
    );
    let sensors = table(
        "input/sensors.csv",
        500,
        &[
            ("timestamp", "datetime", 500),
            ("sensor", "text", 3),
            ("temperature_c", "numeric", 300),
            ("humidity_pct", "numeric", 300),
        ],
    );
    let survey = table(
        "input/survey.csv",
        200,
        &[
            ("respondent_id", "numeric", 200),
            ("country", "text", 5),
            ("age", "numeric", 50),
            ("satisfaction", "numeric", 10),
            ("would_recommend", "text", 2),
        ],
    );
    let web = table(
        "input/web_traffic.csv",
        300,
        &[
            ("date", "datetime", 100),
            ("page", "text", 3),
            ("visits", "numeric", 200),
            ("bounce_rate", "numeric", 200),
        ],
    );
    let ventas = table(
        "input/ventas.csv",
        100,
        &[
            ("fecha", "datetime", 90),
            ("región", "text", 4),
            ("producto", "text", 3),
            ("unidades", "numeric", 40),
            ("importe", "numeric", 99),
        ],
    );
    let theirs = [
        (
            &sales,
            "Which region had the highest total revenue in February? Make a bar chart.",
        ),
        (&sales, "Total sales by month as a line chart"),
        (&sales, "Top 2 products by quantity sold"),
        (&sales, "Now split it by region"),
        (&sales, "What share of total revenue does each region have?"),
        (&sales, "Show me revenue by region and product"),
        (&sales, "Compare North and South revenue"),
        (&sales, "revenue in March for Gadget"),
        (&sales, "Forecast next month's revenue for each region"),
        (&sales, "Describe this workbook"),
        (
            &ventas,
            "¿Qué región tuvo más ingresos en febrero? Haz un gráfico de barras.",
        ),
        (&ventas, "Total de unidades por producto, solo texto ASCII"),
        (&ventas, "¿Cuántas unidades se vendieron en marzo?"),
        (&ventas, "Describe el archivo"),
        (&inventory, "Total stock by warehouse"),
        (
            &inventory,
            "Stock quantity per warehouse; save the table as output/stock.csv",
        ),
        (
            &inventory,
            "Which category has the highest average unit cost?",
        ),
        (&inventory, "How many products per category?"),
        (&inventory, "Translate the column names into French"),
        (&web, "Share of visits by page"),
        (&web, "Which day of the week has the most visits?"),
        (&web, "How did visits change between January and March?"),
        (&web, "Find anomalies in the visits"),
        (&web, "Busca anomalías en las visitas"),
        (&web, "What is the weekly trend of visits?"),
        (
            &sensors,
            "Is temperature correlated with humidity? Show a scatter plot.",
        ),
        (&sensors, "Average temperature by sensor"),
        (&sensors, "¿Qué hay en este archivo?"),
        (
            &sensors,
            "Busca anomalías en la humedad; responde solo en ASCII",
        ),
        (&survey, "How many responses per country?"),
        (&survey, "¿Cuál es la satisfacción media por país?"),
        (&survey, "Is satisfaction related to country?"),
        (&survey, "What is in this file?"),
        (&survey, "Predice la satisfacción del año que viene"),
        (&survey, "Write me a poem about this data"),
        (&sales, include_str!("../../../../examples/anomaly_task.md")),
    ];
    for (t, task) in theirs {
        let u = understand(task, t, detect_lang(task));
        assert_eq!(u, Understood::NotMine, "{task}");
    }
    // The one plain statistic among them is a statistics plan now.
    let p = plan("What is the minimum stock quantity?", &inventory);
    assert_eq!(
        (names(&p), p.measures[0].name.as_str()),
        (vec!["min"], "stock_qty")
    );
}

#[test]
fn a_statistic_word_in_a_column_name_is_the_column() {
    let t = table(
        "input/d.csv",
        30,
        &[
            ("day", "datetime", 30),
            ("daily_count", "numeric", 20),
            ("total_sales", "numeric", 30),
        ],
    );
    let p = plan("Mean and standard deviation of the daily count", &t);
    assert_eq!(names(&p), vec!["mean", "std"]);
    assert_eq!(p.measures[0].name, "daily_count");
    let p = plan("What is the median of total sales?", &t);
    assert_eq!(
        (names(&p), p.measures[0].name.as_str()),
        (vec!["median"], "total_sales")
    );
}

#[test]
fn words_keep_decimals_and_signs() {
    assert_eq!(words_of("a*b = 2.5"), vec!["a", "times", "b", "is", "2d5"]);
    assert_eq!(digits("2d5"), Some(2.5));
    assert_eq!(digits("90th"), Some(90.0));
    assert_eq!(
        stat_word(
            &Stat {
                name: "quantile",
                q: Some(0.9)
            },
            Lang::En
        ),
        "90 percentile"
    );
}

/// Values said with "or" are one pooled condition, a negated value excludes it, and an
/// extreme of the rows or of a share ranks the labels by it (each once declined).
#[test]
fn or_not_and_ranked_rows_or_shares_are_read() {
    let t = boarders();
    let p = plan(
        "What is the mean Fare for passengers with Pclass 1 or 2?",
        &t,
    );
    let f = &p.filters[0];
    assert_eq!(
        (p.group.as_deref(), f.op, f.values.clone(), f.either),
        (None, "in", vec!["1".to_string(), "2".to_string()], true)
    );
    let p = plan("What is the mean age of passengers who are not female?", &t);
    assert_eq!(
        (p.filters[0].op, p.filters[0].values.clone()),
        ("not_in", vec!["female".to_string()])
    );
    let p = plan(
        "What is the median fare excluding passengers in class 3?",
        &t,
    );
    assert_eq!(
        (p.filters[0].column.as_str(), p.filters[0].op),
        ("Pclass", "not_in")
    );
    let p = plan(
        "¿Cuál es la tarifa media de los pasajeros que no son mujeres?",
        &t,
    );
    assert_eq!(p.filters[0].op, "not_in");
    let p = plan("Which passenger class has the fewest passengers?", &t);
    assert_eq!(
        (p.task, p.group.as_deref(), p.label_op),
        (Task::Argmin, Some("Pclass"), Some("rows"))
    );
    let p = plan("Which passenger class had the highest survival rate?", &t);
    assert_eq!(
        (p.task, p.group.as_deref(), p.label_op),
        (Task::Argmax, Some("Pclass"), Some("share"))
    );
    assert_eq!(
        p.share_of.as_ref().map(|f| f.column.as_str()),
        Some("Survived")
    );
    // The mean fare is no share's partner.
    assert!(matches!(
        understand(
            "Which passenger class had the highest survival rate and mean fare?",
            &t,
            Lang::En
        ),
        Understood::Decline(_)
    ));
}

fn visits() -> Table {
    let mut t = table(
        "input/visits.csv",
        300,
        &[
            ("visit_id", "numeric", 300),
            ("department", "text", 4),
            ("patient_age", "numeric", 90),
            ("wait_minutes", "numeric", 280),
            ("admitted", "text", 2),
        ],
    );
    t.column_kinds[0].id = true;
    t.column_kinds[1].values = ["Cardiology", "Emergency", "Neurology", "Pediatrics"]
        .map(String::from)
        .to_vec();
    t.column_kinds[4].values = vec!["yes".into(), "no".into()];
    t
}

/// A yes/no column said as an adjective is a condition; a column named and left out of
/// the plan is declined; "which" opens a second sentence; a significance test is
/// declined, never another skill's (each once answered another question).
#[test]
fn every_named_column_is_in_the_plan_or_declined() {
    let t = visits();
    for (task, op) in [
        ("What is the average age of admitted patients?", "is_true"),
        (
            "¿Cuál es la edad media de los pacientes ingresados?",
            "is_true",
        ),
        (
            "Median wait_minutes of patients who were not admitted",
            "is_false",
        ),
    ] {
        let p = plan(task, &t);
        assert_eq!(
            (p.filters[0].column.as_str(), p.filters[0].op),
            ("admitted", op),
            "{task}"
        );
    }
    // "patients" names the rows, not `patient_age`; "older than 60" is about it.
    let p = plan("Which department has the most admitted patients?", &t);
    assert_eq!(
        (p.label_op, p.group.as_deref()),
        (Some("rows"), Some("department"))
    );
    let p = plan("Mean wait_minutes for patients older than 60", &t);
    assert_eq!(p.filters[0].column, "patient_age");
    // A department named and no part of the plan: declined, not the overall mean.
    let Understood::Decline(d) = understand("Mean wait_minutes, department", &t, Lang::En) else {
        panic!("not declined");
    };
    assert!(d.not_understood[0].contains("`department`"), "{d:?}");
    let p = plan(
        "Load is wait_minutes times patient_age. Which department has the highest total load?",
        &t,
    );
    assert_eq!(p.group.as_deref(), Some("department"));
    for task in [
        "Is the difference in wait_minutes between admitted and non-admitted patients statistically significant?",
        "¿Es estadísticamente significativa la diferencia de espera?",
    ] {
        assert!(
            matches!(understand(task, &t, detect_lang(task)), Understood::Decline(_)),
            "{task}"
        );
    }
}
