//! The measures a plan is of: a derived measure, and the columns named that no
//! condition, group or derived measure took; a text column only for a count or a mode.

use super::mentions::{is_numeric, Mention};
use super::reader::Reader;
use super::{Derived, MeasureSpec, Stat};

/// The measures, and the columns named that no other part took.
pub(super) struct Measures {
    /// The derived measure first, then the numeric columns.
    pub(super) specs: Vec<MeasureSpec>,
    /// The text columns among `mentions`.
    text: Vec<Mention>,
    /// Every column named that no condition, group or derived measure took.
    pub(super) mentions: Vec<Mention>,
}

impl Reader<'_> {
    /// The measures: the numeric columns named that are not used by a condition,
    /// the group, or a derived measure.
    pub(super) fn measures(
        &self,
        derived: Option<&(Derived, Option<String>)>,
        group: Option<&String>,
    ) -> Measures {
        let measure_mentions: Vec<Mention> = self
            .mentions
            .iter()
            .filter(|m| !self.used[m.start] && Some(&m.column) != group)
            .cloned()
            .collect();
        let mut measures: Vec<MeasureSpec> = Vec::new();
        if let Some((d, name)) = derived {
            let symbol = d.op.symbol();
            let name = name
                .clone()
                .unwrap_or_else(|| format!("{} {symbol} {}", d.a, d.b));
            measures.push(MeasureSpec {
                name,
                column: None,
                derived: Some(d.clone()),
            });
        }
        let mut text_measures = Vec::new();
        for m in &measure_mentions {
            if measures
                .iter()
                .any(|x| x.column.as_deref() == Some(&m.column))
            {
                continue;
            }
            if is_numeric(m) {
                measures.push(MeasureSpec {
                    name: m.column.clone(),
                    column: Some(m.column.clone()),
                    derived: None,
                });
            } else {
                text_measures.push(m.clone());
            }
        }
        Measures {
            specs: measures,
            text: text_measures,
            mentions: measure_mentions,
        }
    }

    /// A text column named is a measure only of counts and modes; of other statistics
    /// it is declined, except in an argmax or a share question.
    pub(super) fn text_measure(
        &mut self,
        m: &mut Measures,
        stats: &[(usize, usize, Stat)],
        argmax: bool,
        share: bool,
    ) {
        let only_counts = !stats.is_empty() && stats.iter().all(|(_, _, s)| s.name.counts());
        let stat_names = || {
            let names: Vec<&str> = stats.iter().map(|(_, _, s)| s.name.code()).collect();
            names.join(", ")
        };
        if only_counts && m.specs.is_empty() {
            // Counting or the mode of a text column is fine ("how many distinct cities").
            if let Some(t) = m.text.first() {
                m.specs.push(MeasureSpec {
                    name: t.column.clone(),
                    column: Some(t.column.clone()),
                    derived: None,
                });
            }
        } else if !m.text.is_empty() && m.specs.is_empty() && !argmax && !share {
            let t = &m.text[0];
            self.not_understood.push(self.say(
                &format!(
                    "`{}` is a text column: I cannot compute {} of it",
                    t.column,
                    stat_names()
                ),
                &format!(
                    "`{}` es una columna de texto: no puedo calcular {} de ella",
                    t.column,
                    stat_names()
                ),
            ));
        }
    }
}
