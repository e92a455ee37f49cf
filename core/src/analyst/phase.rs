//! The planner's steps, and the marker line by which it recognises its own earlier
//! calls in the conversation: the first line of every script it writes is
//! `# sandalyst-offline-phase: <phase>`.

/// First line of every script; how the planner recognises its own earlier calls.
pub(super) const PHASE_MARKER: &str = "# sandalyst-offline-phase: ";

/// The steps the planner can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Inspect,
    Analyse,
    /// The fallback analysis after `Analyse` failed.
    AnalyseSimple,
    Validate,
    /// The data profile (also with the answer to a request no skill covers).
    Profile,
    /// An aggregate question.
    Aggregate,
    /// A correlation or a trend.
    Relate,
    /// A statistics plan (`stats.py`).
    Stats,
}

impl Phase {
    pub(super) fn name(self) -> &'static str {
        match self {
            Phase::Inspect => "inspect",
            Phase::Analyse => "analyse",
            Phase::AnalyseSimple => "analyse-simple",
            Phase::Validate => "validate",
            Phase::Profile => "profile",
            Phase::Aggregate => "aggregate",
            Phase::Relate => "relate",
            Phase::Stats => "stats",
        }
    }

    fn from_name(s: &str) -> Option<Phase> {
        [
            Phase::Inspect,
            Phase::Analyse,
            Phase::AnalyseSimple,
            Phase::Validate,
            Phase::Profile,
            Phase::Aggregate,
            Phase::Relate,
            Phase::Stats,
        ]
        .into_iter()
        .find(|p| p.name() == s)
    }
}

/// The phase of a script the planner wrote, from its marker line.
pub(super) fn phase_of(source: &str) -> Option<Phase> {
    source
        .lines()
        .find_map(|l| l.strip_prefix(PHASE_MARKER))
        .and_then(|p| Phase::from_name(p.trim()))
}
