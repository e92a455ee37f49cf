//! The answer's shape and each task's part of the plan: a correlation's two measures
//! and method, the method of an outliers or normality test, an argmax's label and how
//! its rows combine, a share's condition, a description's statistics and measures.

use super::asked::Asked;
use super::group::Extremes;
use super::measures::Measures;
use super::mentions::{is_code, is_numeric, is_yes_no};
use super::options::{alpha, Options};
use super::reader::Reader;
use super::unread::{is_rows_word, unknown_after_stat, unplanned_columns};
use super::words::{digits, find, has, has_any, num};
use super::{Derived, Filter, MeasureSpec, Stat, StatPlan, Task, Theirs};
use super::{DerivedOp, FilterOp, LabelOp, StatMethod, StatName};
use crate::analyst::lexicon::LEXICON;

/// The answer's shape: a test when one is asked, an argmax when an extreme has its
/// label, else a description.
pub(super) fn task_of(asked: &Asked, argmax: bool, extremes: Extremes, w: &[String]) -> Task {
    let Extremes { high, low } = extremes;
    if asked.correlation {
        Task::Correlation
    } else if asked.outliers {
        Task::Outliers
    } else if asked.normality {
        Task::Normality
    } else if argmax {
        if low && !high {
            Task::Argmin
        } else if high && low {
            // "highest" and "lowest" both: the first said wins.
            let first_high = LEXICON.high.iter().flat_map(|p| find(w, p)).min();
            let first_low = LEXICON.low.iter().flat_map(|p| find(w, p)).min();
            if first_low < first_high {
                Task::Argmin
            } else {
                Task::Argmax
            }
        } else {
            Task::Argmax
        }
    } else {
        Task::Describe
    }
}

impl StatPlan {
    /// A plan of `task`, the task's own parts still to fill in.
    pub(super) fn new(
        task: Task,
        group: Option<String>,
        filters: Vec<Filter>,
        options: &Options,
        named_columns: Vec<String>,
    ) -> StatPlan {
        StatPlan {
            task,
            stats: Vec::new(),
            measures: Vec::new(),
            second: None,
            group,
            label_op: None,
            filters,
            ddof: if options.population { 0 } else { 1 },
            decimals: options.decimals,
            missing: options.missing,
            method: None,
            biased: false,
            percent: false,
            z: 3.0,
            alpha: 0.05,
            alpha_said: false,
            needs_value_filter: false,
            named_columns,
            share_of: None,
        }
    }
}

/// What a task's part of the plan is chosen from.
pub(super) struct Parts {
    /// The statistics said, each once.
    pub(super) stats: Vec<Stat>,
    pub(super) measures: Measures,
    pub(super) derived: Option<(Derived, Option<String>)>,
    /// A share of the rows where a condition holds is asked.
    pub(super) share: bool,
}

impl Reader<'_> {
    /// Fill in the task's part of `plan`; `Err(Theirs)` when it turns out to be a
    /// question the aggregate skill answers.
    pub(super) fn plan_task(&mut self, plan: &mut StatPlan, parts: Parts) -> Result<(), Theirs> {
        match plan.task {
            Task::Correlation => self.correlation(plan, parts.measures.specs),
            Task::Outliers | Task::Normality => self.test_of_one(plan, parts.measures.specs),
            Task::Argmax | Task::Argmin => return self.argmax(plan, parts),
            Task::Describe if parts.share => self.share(plan, parts),
            Task::Describe => return self.describe(plan, parts),
        }
        Ok(())
    }

    /// Two numeric columns, by Pearson or Spearman.
    fn correlation(&mut self, plan: &mut StatPlan, measures: Vec<MeasureSpec>) {
        let nums: Vec<&MeasureSpec> = measures.iter().filter(|m| m.column.is_some()).collect();
        if nums.len() < 2 {
            self.not_understood.push(self.say(
                "which two numeric columns to correlate (name both)",
                "qué dos columnas numéricas correlacionar (nombre las dos)",
            ));
        } else {
            plan.measures = vec![nums[0].clone()];
            plan.second = nums[1].column.clone();
        }
        // The method a word names ("Spearman", "Kendall's tau", "rank correlation").
        let named = LEXICON
            .correlation_methods
            .iter()
            .find(|(p, _)| has(&self.w, p));
        for (phrase, _) in LEXICON.correlation_methods.iter() {
            self.read_phrases(&[phrase]);
        }
        let named = named.map(|(_, m)| StatMethod::of_code(m));
        plan.method = Some(named.unwrap_or(if has_any(&self.w, &LEXICON.ranks) {
            StatMethod::Spearman
        } else {
            StatMethod::Pearson
        }));
        plan.group = None;
    }

    /// Outliers (by IQR or z-score) or normality (by skewness, Shapiro-Wilk or
    /// Kolmogorov-Smirnov) of one measure.
    fn test_of_one(&mut self, plan: &mut StatPlan, measures: Vec<MeasureSpec>) {
        if plan.task == Task::Outliers {
            let z = has_any(&self.w, &LEXICON.z_score) || has_any(&self.w, &LEXICON.in_sigmas);
            plan.method = Some(if z { StatMethod::Z } else { StatMethod::Iqr });
            if z {
                for (i, x) in self.w.iter().enumerate() {
                    if x.starts_with("standard") || x.starts_with("desviacion") || x == "sigma" {
                        if let Some(v) = i.checked_sub(1).and_then(|j| num(&self.w[j])) {
                            plan.z = v;
                        }
                    }
                }
                // "a z-score threshold of 2.5", "umbral de 2,5"
                for (i, x) in self.w.iter().enumerate() {
                    if x == "threshold" || x == "umbral" {
                        let mut k = i + 1;
                        if self.w.get(k).is_some_and(|x| x == "of" || x == "de") {
                            k += 1;
                        }
                        if let Some(v) = self.w.get(k).and_then(|x| digits(x)) {
                            plan.z = v;
                        }
                    }
                }
                if let Some(v) = self.z_threshold {
                    plan.z = v;
                }
            }
            self.outlier_rule_restated(plan);
        } else {
            if let Some(a) = alpha(&self.w) {
                (plan.alpha, plan.alpha_said) = (a, true);
            }
            plan.method = Some(if has(&self.w, "shapiro") {
                StatMethod::Shapiro
            } else if has_any(&self.w, &LEXICON.kolmogorov) {
                StatMethod::Ks
            } else {
                StatMethod::Skew
            });
        }
        plan.measures = measures.into_iter().take(1).collect();
        plan.group = None;
    }

    /// "values below Q1 - 1.5*IQR or above Q3 + 1.5*IQR", "1.5 times the interquartile
    /// range beyond the quartiles", "if the absolute value of its z-score is greater than
    /// 3": the outlier rule said again in its own words. A run of unread words of the
    /// rule's vocabulary (`outlier_rule_words`, numbers, comparators) next to a word that
    /// names the rule is read when its numbers are the rule's: 1.5, and both tails, for
    /// the IQR rule; one threshold for z-scores (it becomes the threshold). Anything else
    /// stays unread, so declined.
    fn outlier_rule_restated(&mut self, plan: &mut StatPlan) {
        let z = plan.method == Some(StatMethod::Z);
        let marks: &[&str] = if z {
            &LEXICON.z_marks
        } else {
            &LEXICON.iqr_marks
        };
        let comparator = |x: &str| {
            LEXICON
                .comparators
                .iter()
                .any(|(p, _, _)| p.split(' ').any(|y| y == x))
        };
        let named = |k: usize| self.mentions.iter().any(|m| m.start <= k && k < m.end);
        let of_rule = |k: usize| {
            let x = self.w[k].as_str();
            !self.used[k]
                && !named(k)
                && (num(x).is_some() || LEXICON.outlier_rule_words.contains(&x) || comparator(x))
        };
        let mut runs = Vec::new();
        let mut k = 0;
        while k < self.w.len() {
            let start = k;
            while k < self.w.len() && of_rule(k) {
                k += 1;
            }
            if k > start {
                runs.push((start, k));
            }
            k += 1;
        }
        for (start, end) in runs {
            let around = &self.w[start.saturating_sub(1)..(end + 1).min(self.w.len())];
            let run = &self.w[start..end];
            let has = |list: &[&str]| run.iter().any(|x| list.contains(&x.as_str()));
            let numbers: Vec<f64> = run.iter().filter_map(|x| num(x)).collect();
            let fits = if z {
                numbers.windows(2).all(|p| p[0] == p[1])
            } else {
                numbers.iter().all(|n| *n == 1.5)
                    && (has(&LEXICON.both_tails)
                        || ["q1", "q3"].iter().all(|q| run.iter().any(|x| x == q)))
            };
            if around.iter().any(|x| marks.contains(&x.as_str())) && fits {
                if let (true, Some(t)) = (z, numbers.first()) {
                    plan.z = *t;
                }
                self.used[start..end].fill(true);
            }
        }
    }

    /// The label with the highest or lowest value, and how a label's rows combine.
    fn argmax(&mut self, plan: &mut StatPlan, parts: Parts) -> Result<(), Theirs> {
        if plan.group.is_some() && parts.share {
            self.argmax_by_share(plan, parts);
            return Ok(());
        }
        // "Which port had the most passengers?": the labels' numbers of rows.
        let only_the_label = parts
            .measures
            .specs
            .iter()
            .all(|m| m.column.is_some() && m.column == plan.group);
        if plan.group.is_some() && self.counts_rows() && only_the_label && parts.derived.is_none() {
            plan.label_op = Some(LabelOp::Rows);
            return Ok(());
        }
        let Parts {
            stats,
            measures,
            derived,
            ..
        } = parts;
        let measures = measures.specs;
        // The statistic, if said, is how a label's rows are combined ("highest
        // average score"); "highest"/"maximum" themselves are the argmax.
        let combine: Vec<&Stat> = stats
            .iter()
            .filter(|s| !matches!(s.name, StatName::Max | StatName::Min))
            .collect();
        match combine.as_slice() {
            [] => {}
            [s] if LabelOp::of(s.name).is_some() => plan.label_op = LabelOp::of(s.name),
            [s, ..] => self.not_understood.push(self.say(
                &format!("which label is highest or lowest by {}: I can rank labels by a total, a mean, a median or a count", s.name),
                &format!("qué etiqueta es la más alta o baja según {}: sé ordenar por total, media, mediana o recuento", s.name),
            )),
        }
        // "Which sex has the lower survival count?": the count of a 0/1 column's
        // ones is its total, not the rows.
        let ones = measures.first().is_some_and(|m| {
            self.table.column_kinds.iter().any(|c| {
                Some(&c.name) == m.column.as_ref()
                    && c.values.len() == 2
                    && c.values.iter().all(|v| v == "0" || v == "1")
            })
        });
        if plan.label_op == Some(LabelOp::Count) && ones {
            plan.label_op = Some(LabelOp::Sum);
        }
        if plan.label_op.is_some()
            && derived.is_none()
            && plan.filters.is_empty()
            && self.not_understood.is_empty()
            && !plan
                .group
                .as_deref()
                .is_some_and(|g| is_code(self.table, g))
            && !ones
            && self.all_placed(plan, &measures)
        {
            // "Which category has the highest average unit cost?": aggregate.py.
            return Err(Theirs);
        }
        if plan.label_op.is_none()
            && derived
                .as_ref()
                .is_some_and(|(d, _)| d.op == DerivedOp::Product)
        {
            // "revenue is units times price" over several rows a label: its total.
            plan.label_op = Some(LabelOp::SumIfRepeated);
        }
        let quantity = (0..self.w.len()).any(|i| {
            LEXICON.quantity_extremes.contains(&self.w[i].as_str())
                && self.mention_at(i + 1).is_some()
        }) || has_any(&self.w, &LEXICON.sold_words);
        if plan.label_op.is_none() && quantity {
            // "Which product sold the most units?": a quantity adds up over a
            // label's rows; with no condition, the aggregate skill's question.
            if derived.is_none()
                && plan.filters.is_empty()
                && self.not_understood.is_empty()
                && self.all_placed(plan, &measures)
            {
                return Err(Theirs);
            }
            plan.label_op = Some(LabelOp::SumIfRepeated);
        }
        if plan.group.is_none() {
            self.not_understood.push(self.say(
                "which column holds the labels to compare (e.g. \"which city\")",
                "qué columna tiene las etiquetas a comparar (por ejemplo, \"qué ciudad\")",
            ));
        }
        if plan.label_op == Some(LabelOp::Count) {
            plan.measures = measures.into_iter().take(1).collect();
        } else {
            plan.measures = measures.into_iter().take(1).collect();
            if plan.measures.is_empty() {
                self.not_understood.push(self.say(
                    "which numeric value to compare the labels by (name its column)",
                    "por qué valor numérico comparar las etiquetas (nombre su columna)",
                ));
            }
        }
        Ok(())
    }

    /// The share of the rows where a yes/no column or a value holds.
    fn share(&mut self, plan: &mut StatPlan, parts: Parts) {
        let Parts {
            stats, measures, ..
        } = parts;
        let measures = measures.specs;
        let filters_before = plan.filters.len();
        plan.share_of = self.share_condition(plan);
        // "What share of non-cancelled flights were delayed more than 30 minutes?":
        // with a yes/no or value condition and a comparison both said, which is the
        // share's and which the rows' is not read here; declined, never swapped.
        let from_filters = plan.filters.len() < filters_before;
        // "What percentage are smokers? Count the rows where Smoker is Yes ...": a
        // condition on the share's own column restates it (a share of smokers among
        // the smokers would be no question).
        if let Some(target) = &plan.share_of {
            let before = plan.filters.len();
            plan.filters.retain(|f| f.column != target.column);
            self.share_restated |= plan.filters.len() < before;
        }
        let compared = plan.filters.iter().any(|f| !f.op.on_values());
        if from_filters && compared {
            self.not_understood.push(self.say(
                "which condition the share is of and which rows it is over (ask for one condition, e.g. \"what share of flights had a delay above 30\")",
                "de qué condición es el porcentaje y sobre qué filas (pregunte por una condición, por ejemplo, \"qué porcentaje de vuelos tuvo un retraso mayor que 30\")",
            ));
        }
        if plan.share_of.is_none() {
            self.not_understood.push(self.say(
                "the share of which rows: name a yes/no column or a value (\"what percentage of passengers survived\", \"are female\")",
                "el porcentaje de qué filas: nombre una columna de sí/no o un valor (\"qué porcentaje de pasajeros sobrevivió\", \"son mujeres\")",
            ));
        }
        // "a missing BMI": the missing values are the share's rows, not a statistic.
        let of_missing = plan
            .share_of
            .as_ref()
            .is_some_and(|f| f.op == FilterOp::IsMissing);
        if stats.iter().any(|s| {
            !(matches!(s.name, StatName::Share | StatName::Count)
                || of_missing && s.name == StatName::Missing)
        }) || !measures.is_empty()
            && plan.share_of.as_ref().is_some_and(|f| {
                !measures
                    .iter()
                    .all(|m| m.column.as_deref() == Some(f.column.as_str()))
            })
        {
            self.not_understood.push(self.say(
                "a share together with another statistic or measure",
                "un porcentaje junto con otra estadística o medida",
            ));
        }
        plan.stats = vec![Stat::plain(StatName::Share)];
        self.percent_range();
    }

    /// "divide the number of houses whose condition is 5 by the total number of
    /// houses": a share restated as counts of the rows (the condition is read apart).
    pub(super) fn share_counts_restated(&mut self) {
        for i in 0..self.w.len().saturating_sub(2) {
            let counted = LEXICON.share_count_nouns.contains(&self.w[i].as_str())
                && LEXICON.of_words.contains(&self.w[i + 1].as_str())
                && is_rows_word(self, &self.w[i + 2]);
            if !counted {
                continue;
            }
            let from = self.back_over(i, &LEXICON.share_count_words);
            self.used[from..i + 3].fill(true);
        }
    }

    /// "Give a number between 0 and 100": a share's answer restated as a percentage,
    /// which it is (a range of 0 to 1 would ask for a fraction: left unread, declined).
    fn percent_range(&mut self) {
        let w = &self.w;
        let at = (1..w.len().saturating_sub(3)).find(|&at| {
            ["between", "entre"].contains(&w[at].as_str())
                && (LEXICON.slot_number.contains(&w[at - 1].as_str())
                    || LEXICON.answer_forms.contains(&w[at - 1].as_str()))
                && num(&w[at + 1]) == Some(0.0)
                && LEXICON.joiners.contains(&w[at + 2].as_str())
                && num(&w[at + 3]) == Some(100.0)
        });
        if let Some(at) = at {
            self.used[at - 1..at + 4].fill(true);
        }
    }

    /// A share's condition: a yes/no column named ("survived", "survival"), else the
    /// one yes/no or value condition ("are female"), taken out of the plan's filters,
    /// else a column's missing values ("have no PM2.5 value").
    fn share_condition(&mut self, plan: &mut StatPlan) -> Option<Filter> {
        let yes_no = self
            .mentions
            .iter()
            .find(|m| {
                !self.used[m.start]
                    && plan.group.as_deref() != Some(m.column.as_str())
                    && is_yes_no(self.table, &m.column)
            })
            .map(|m| Filter {
                column: m.column.clone(),
                op: FilterOp::IsTrue,
                ..Filter::default()
            });
        let truth = plan
            .filters
            .iter()
            .position(|f| matches!(f.op, FilterOp::IsTrue | FilterOp::IsFalse));
        let values: Vec<usize> = (0..plan.filters.len())
            .filter(|&i| plan.filters[i].op == FilterOp::In)
            .collect();
        match (yes_no, truth, values.as_slice()) {
            (Some(f), _, _) => Some(f),
            (None, Some(i), _) => Some(plan.filters.remove(i)),
            (None, None, [i]) => Some(plan.filters.remove(*i)),
            // "in condition 5", said again as "whose condition is 5": one condition.
            (None, None, [])
                if plan.filters.first().is_some_and(|f| {
                    f.stat.is_none()
                        && matches!(
                            f.op,
                            FilterOp::Gt
                                | FilterOp::Ge
                                | FilterOp::Lt
                                | FilterOp::Le
                                | FilterOp::Eq
                        )
                }) && plan.filters.iter().all(|f| *f == plan.filters[0]) =>
            {
                // The condition words said are the share's own.
                self.share_restated = true;
                Some(plan.filters.remove(0))
            }
            // "What percentage of the readings have no PM2.5 value?"
            _ => {
                let (column, start, end) = self.missing_of()?;
                self.used[start..end].fill(true);
                Some(Filter {
                    column,
                    op: FilterOp::IsMissing,
                    ..Filter::default()
                })
            }
        }
    }

    /// "Which class had the highest survival rate?": labels ranked by the share of
    /// their rows where a condition holds.
    fn argmax_by_share(&mut self, plan: &mut StatPlan, parts: Parts) {
        plan.label_op = Some(LabelOp::Share);
        plan.share_of = self.share_condition(plan);
        if plan.share_of.is_none() {
            self.not_understood.push(self.say(
                "the share of which rows: name a yes/no column or a value (\"the highest survival rate\")",
                "el porcentaje de qué filas: nombre una columna de sí/no o un valor (\"la mayor tasa de supervivencia\")",
            ));
        }
        let share_column = plan.share_of.as_ref().map(|f| f.column.clone());
        let other_stat = parts.stats.iter().any(|s| {
            !matches!(
                s.name,
                StatName::Share | StatName::Max | StatName::Min | StatName::Count
            )
        });
        let other_measure = parts
            .measures
            .specs
            .iter()
            .any(|m| m.column.is_none() || m.column != share_column && m.column != plan.group);
        if other_stat || other_measure || parts.derived.is_some() {
            self.not_understood.push(self.say(
                "a share together with another statistic or measure",
                "un porcentaje junto con otra estadística o medida",
            ));
        }
    }

    /// Statistics of the measures, per group when grouped.
    fn describe(&mut self, plan: &mut StatPlan, parts: Parts) -> Result<(), Theirs> {
        let Parts {
            stats, measures, ..
        } = parts;
        let Measures {
            specs: measures,
            mentions: measure_mentions,
            ..
        } = measures;
        plan.stats = stats;
        plan.measures = measures;
        // "price in Austin compared to Denver", "in Austin and Portland": each
        // value's own statistic, side by side (never one pooled number).
        if plan.group.is_none() {
            if let Some(f) = plan
                .filters
                .iter()
                .find(|f| f.op == FilterOp::In && f.values.len() >= 2 && !f.either)
            {
                plan.group = Some(f.column.clone());
            }
        }
        let needs_measure = plan.stats.iter().any(|s| s.name != StatName::Count);
        if plan.stats.is_empty() {
            self.not_understood
                .push(self.say("which statistic to compute", "qué estadística calcular"));
        } else if plan.measures.is_empty() && needs_measure {
            let after = unknown_after_stat(self);
            self.not_understood.push(match after {
                Some(x) => self.say(
                    &format!("\"{x}\": no column of the table has that name"),
                    &format!("\"{x}\": ninguna columna de la tabla se llama así"),
                ),
                None => self.say(
                    "of which column: the request names none of the table's columns",
                    "de qué columna: la petición no nombra ninguna columna de la tabla",
                ),
            });
        }
        // A plain total/mean/median/count/min/max by a group of a column is
        // aggregate.py's question.
        let plain = plan.stats.len() == 1
            && plan.stats[0].name.aggregates()
            && plan.measures.len() <= 1
            && plan.measures.iter().all(|m| m.derived.is_none())
            && plan.filters.is_empty()
            && plan.decimals.is_none()
            && !self.both_sides;
        // "How many orders had a discount?": the rows with which values of it?
        // (Counting its non-missing values answers another question.)
        if plan.stats.len() == 1 && plan.stats[0].name == StatName::Count && plan.group.is_none() {
            for m in &measure_mentions {
                let having = (m.start.saturating_sub(2)..m.start)
                    .any(|k| LEXICON.having.contains(&self.w[k].as_str()));
                if having && is_numeric(m) {
                    self.not_understood.push(self.say(
                        &format!(
                            "which values of `{}` count (say e.g. \"more than 0\")",
                            m.column
                        ),
                        &format!(
                            "qué valores de `{}` cuentan (diga, por ejemplo, \"más de 0\")",
                            m.column
                        ),
                    ));
                }
            }
        }
        let code = plan
            .group
            .as_deref()
            .is_some_and(|g| is_code(self.table, g));
        let placed = self.all_placed(plan, &plan.measures);
        if plain && plan.group.is_some() && self.not_understood.is_empty() && !code && placed {
            return Err(Theirs);
        }
        Ok(())
    }

    /// Whether every column the request names has its place in `plan` with
    /// `measures`: a question handed to the aggregate skill must lose no condition it
    /// cannot read ("when on promo").
    fn all_placed(&self, plan: &StatPlan, measures: &[MeasureSpec]) -> bool {
        let mut whole = plan.clone();
        whole.measures = measures.to_vec();
        unplanned_columns(self, &whole).is_empty()
    }
}
