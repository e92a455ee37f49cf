//! The plan's enumerations, each variant with the one code that the plan's JSON (read
//! by `stats.py`), the lexicon and the texts share: a statistic, a condition's
//! operator, a derived measure's arithmetic, a method, what missing values become, how
//! a label's rows combine.

/// An enum whose variants have codes: `code()`, `of_code()` (for the lexicon's codes),
/// serialized and displayed as the code.
macro_rules! coded {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $code:literal,)+ }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(in crate::analyst) enum $name { $($(#[$vm])* $v,)+ }

        // (Not every enum is read from the lexicon.)
        #[allow(dead_code)]
        impl $name {
            pub(in crate::analyst) const ALL: &'static [$name] = &[$($name::$v,)+];

            pub(in crate::analyst) fn code(self) -> &'static str {
                match self { $($name::$v => $code,)+ }
            }

            /// The variant of a lexicon code (a code none has is a bug of the lexicon,
            /// which its tests read).
            pub(in crate::analyst) fn of_code(code: &str) -> $name {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.code() == code)
                    .unwrap_or_else(|| panic!("lexicon.toml: `{code}` is no {}", stringify!($name)))
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.code())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.code())
            }
        }
    };
}

coded! {
    /// A statistic the script computes.
    StatName {
        Mean = "mean",
        Median = "median",
        Mode = "mode",
        Std = "std",
        Var = "var",
        Min = "min",
        Max = "max",
        Range = "range",
        Iqr = "iqr",
        Count = "count",
        Distinct = "distinct",
        Sum = "sum",
        Skew = "skew",
        Kurt = "kurt",
        Cv = "cv",
        Sem = "sem",
        Missing = "missing",
        Share = "share",
        Quantile = "quantile",
    }
}

impl StatName {
    /// One of the plain aggregates of a group's rows (total, mean, median, count,
    /// lowest, highest): what `aggregate.py` computes.
    pub(in crate::analyst) fn aggregates(self) -> bool {
        use StatName::*;
        matches!(self, Sum | Mean | Median | Count | Min | Max)
    }

    /// Counted, not measured: it needs no number in the column.
    pub(in crate::analyst) fn counts(self) -> bool {
        use StatName::*;
        matches!(self, Count | Distinct | Mode | Missing)
    }
}

coded! {
    /// How a condition keeps rows.
    #[derive(Default)]
    FilterOp {
        Gt = "gt",
        Ge = "ge",
        Lt = "lt",
        Le = "le",
        #[default]
        Eq = "eq",
        /// The year of a date column.
        Year = "year",
        /// On or after the day `date`.
        DateFrom = "date_from",
        /// Before the day `date`.
        DateBefore = "date_before",
        /// The month of the year, any year, inclusive.
        MonthFrom = "month_from",
        MonthTo = "month_to",
        /// A month named without its year: applied only when the dates are all of one
        /// year.
        MonthSince = "month_since",
        MonthBefore = "month_before",
        /// One of `values`.
        In = "in",
        NotIn = "not_in",
        IsTrue = "is_true",
        IsFalse = "is_false",
        IsMissing = "is_missing",
    }
}

impl FilterOp {
    /// A condition on a text column's values (not on a number or a date).
    pub(in crate::analyst) fn on_values(self) -> bool {
        use FilterOp::*;
        matches!(self, In | NotIn | IsTrue | IsFalse)
    }
}

coded! {
    /// How a derived measure combines its two sides.
    #[derive(Default)]
    DerivedOp {
        Product = "product",
        #[default]
        Difference = "difference",
        Ratio = "ratio",
        Sum = "sum",
        /// The days between two dates.
        Days = "days",
        Hours = "hours",
    }
}

impl DerivedOp {
    /// How the measure's name writes it ("units x price").
    pub(in crate::analyst) fn symbol(self) -> &'static str {
        match self {
            DerivedOp::Product => "x",
            DerivedOp::Sum => "+",
            DerivedOp::Ratio => "/",
            DerivedOp::Difference | DerivedOp::Days | DerivedOp::Hours => "-",
        }
    }
}

coded! {
    /// The method of a correlation, an outlier rule or a normality test.
    StatMethod {
        Pearson = "pearson",
        Spearman = "spearman",
        Kendall = "kendall",
        Iqr = "iqr",
        Z = "z",
        Skew = "skew",
        Shapiro = "shapiro",
        Ks = "ks",
    }
}

coded! {
    /// What missing values of a measure become.
    MissingAs {
        Drop = "drop",
        Zero = "zero",
        Mean = "mean",
        Median = "median",
    }
}

coded! {
    /// How the rows of one label are combined before labels are ranked.
    LabelOp {
        /// The label's number of rows ("which port had the most passengers").
        Rows = "rows",
        /// The share of its rows where a condition holds.
        Share = "share",
        Sum = "sum",
        Mean = "mean",
        Median = "median",
        Count = "count",
        /// A total where a label has several rows, the value itself where it has one.
        SumIfRepeated = "sum_if_repeated",
    }
}

impl LabelOp {
    /// The combination a statistic names, if labels can be ranked by it.
    pub(in crate::analyst) fn of(stat: StatName) -> Option<LabelOp> {
        match stat {
            StatName::Sum => Some(LabelOp::Sum),
            StatName::Mean => Some(LabelOp::Mean),
            StatName::Median => Some(LabelOp::Median),
            StatName::Count => Some(LabelOp::Count),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyst::lexicon::LEXICON;

    #[test]
    fn every_code_the_lexicon_gives_is_one_of_the_plan() {
        let lex = &*LEXICON;
        for (_, op, _) in lex.comparators.iter() {
            assert_eq!(FilterOp::of_code(op).code(), *op);
        }
        for (_, op) in lex.after_number.iter() {
            FilterOp::of_code(op);
        }
        for (_, op) in lex.arithmetic.iter() {
            DerivedOp::of_code(op);
        }
        for (_, _, op) in lex.two_column_measures.iter() {
            DerivedOp::of_code(op);
        }
        for (_, m) in lex.correlation_methods.iter() {
            StatMethod::of_code(m);
        }
        for (_, v) in lex.fill_values.iter() {
            MissingAs::of_code(v);
        }
        // The plan's JSON says the code (what `stats.py` reads).
        assert_eq!(
            serde_json::to_string(&FilterOp::NotIn).unwrap(),
            "\"not_in\""
        );
        assert_eq!(LabelOp::SumIfRepeated.to_string(), "sum_if_repeated");
    }
}
