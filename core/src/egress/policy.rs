//! What the sandbox may reach: the [`NetworkMode`] a session runs with and, for
//! `allow:`, the [`Allowlist`] of host names the proxy checks every request against.
//! Everything is checked where it enters (the command line, a settings file, a
//! deserialised config), so a list that exists is a valid one.

use std::collections::BTreeSet;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The most entries an allowlist may hold (after presets are expanded).
pub const MAX_ENTRIES: usize = 256;
/// The longest host name (DNS's limit, without the trailing dot).
pub const MAX_NAME: usize = 253;
/// The longest label of a host name.
const MAX_LABEL: usize = 63;

/// How much network the sandbox has.
///
/// Text form (`--network`, settings): `off`, `full`, or
/// `allow:pypi.org,files.pythonhosted.org,*.example.com` (entries may name a preset
/// as `@python-packages`, see [`presets`]). Serialised: `"off"`, `"full"`,
/// `{"allow": ["pypi.org", ...]}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkMode {
    /// No network at all: the container has no interface but loopback.
    Off,
    /// The container sits on an internal network with no route out; the only thing
    /// it reaches is the egress [`Proxy`](super::Proxy), which lets through the
    /// hosts of this list and nothing else (and never a private or link-local
    /// address, unless the user pinned the name to it).
    Allow(Allowlist),
    /// The container is on the engine's ordinary bridge network, and the proxy is not
    /// used at all: nothing is checked and no egress event is recorded. It reaches
    /// whatever this machine reaches, see [`NetworkMode::exposure`].
    Full,
}

impl NetworkMode {
    /// The allowlist, in `Allow` mode.
    pub fn allowlist(&self) -> Option<&Allowlist> {
        match self {
            NetworkMode::Allow(list) => Some(list),
            _ => None,
        }
    }

    /// One plain sentence on what the mode exposes, for the settings page and the
    /// command line's help.
    pub fn exposure(&self) -> &'static str {
        match self {
            NetworkMode::Off => "no network: the code cannot reach anything outside its container",
            NetworkMode::Allow(_) => {
                "only the listed hosts, through Sandalyst's proxy; every connection and refusal is recorded"
            }
            NetworkMode::Full => {
                "full network, unchecked and unrecorded: the code reaches anything this machine can, \
                 including the local network, services on this machine's other interfaces and the \
                 cloud metadata address (169.254.169.254)"
            }
        }
    }
}

impl fmt::Display for NetworkMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetworkMode::Off => f.write_str("off"),
            NetworkMode::Full => f.write_str("full"),
            NetworkMode::Allow(list) => write!(f, "allow:{list}"),
        }
    }
}

impl FromStr for NetworkMode {
    type Err = PolicyError;

    fn from_str(s: &str) -> Result<Self, PolicyError> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("off") {
            return Ok(NetworkMode::Off);
        }
        if s.eq_ignore_ascii_case("full") {
            return Ok(NetworkMode::Full);
        }
        match s.split_once(':') {
            Some((mode, list)) if mode.eq_ignore_ascii_case("allow") => {
                Ok(NetworkMode::Allow(list.parse()?))
            }
            _ => Err(PolicyError::UnknownMode { given: s.into() }),
        }
    }
}

/// Why a network mode or an allowlist entry was not accepted; each says what to write
/// instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error(
        "unknown network mode {given:?}: use off, full, or allow:DOMAIN,… (e.g. allow:pypi.org)"
    )]
    UnknownMode { given: String },
    #[error("the allowlist is empty: name at least one host, e.g. allow:pypi.org or allow:@python-packages")]
    Empty,
    #[error("the allowlist has an empty entry (two commas, or one at the end)")]
    EmptyEntry,
    #[error("{entry:?} is not a host name: {problem}")]
    BadName { entry: String, problem: String },
    #[error("{entry:?} has a bad port: a port is a number from 1 to 65535")]
    BadPort { entry: String },
    #[error("{entry:?} is too long: a host name has at most {MAX_NAME} characters")]
    TooLong { entry: String },
    #[error("the allowlist has {count} entries; at most {MAX_ENTRIES} are allowed")]
    TooMany { count: usize },
    #[error("no preset named {name:?}; the presets are: {known}")]
    UnknownPreset { name: String, known: String },
}

fn bad(entry: &str, problem: impl Into<String>) -> PolicyError {
    PolicyError::BadName {
        entry: entry.into(),
        problem: problem.into(),
    }
}

/// A named set of hosts the settings page offers as one choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// What an allowlist writes after `@`, e.g. `python-packages`.
    pub name: &'static str,
    /// What the settings page shows, e.g. "Python packages".
    pub label: &'static str,
    pub hosts: &'static [&'static str],
    /// What it is for, one line.
    pub about: &'static str,
}

const PRESETS: &[Preset] = &[Preset {
    name: "python-packages",
    label: "Python packages",
    hosts: &["pypi.org", "files.pythonhosted.org"],
    about: "pip install from the Python Package Index (its index and its file host)",
}];

/// Every preset, for the settings page and the command line's help.
pub fn presets() -> &'static [Preset] {
    PRESETS
}

/// A host as asked for or as listed: a normalised name (lower case, no trailing dot)
/// or an IP address.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Host {
    Name(String),
    Ip(IpAddr),
}

impl Host {
    /// A host from a URL, a `CONNECT` line or a list: an IPv4 address, an IPv6 address
    /// (bracketed or not), or a DNS name of letters, digits, `-` and `_`, whose last
    /// label is not all digits (so `127.1` or `2130706433`, which some resolvers read
    /// as addresses, are no names). Case and one trailing dot are ignored.
    pub fn parse(s: &str) -> Result<Host, PolicyError> {
        let inner = s
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .unwrap_or(s);
        if let Ok(v6) = inner.parse::<Ipv6Addr>() {
            return Ok(Host::Ip(IpAddr::V6(v6)));
        }
        if inner.len() != s.len() {
            return Err(bad(s, "the brackets hold no IPv6 address"));
        }
        if let Ok(v4) = s.parse::<Ipv4Addr>() {
            return Ok(Host::Ip(IpAddr::V4(v4)));
        }
        let name = s.strip_suffix('.').unwrap_or(s);
        if name.is_empty() {
            return Err(bad(s, "it is empty"));
        }
        if name.len() > MAX_NAME {
            return Err(PolicyError::TooLong { entry: s.into() });
        }
        let labels: Vec<&str> = name.split('.').collect();
        for label in &labels {
            if label.is_empty() {
                return Err(bad(s, "it has an empty label (two dots in a row)"));
            }
            if label.len() > MAX_LABEL {
                return Err(bad(
                    s,
                    format!("a label has more than {MAX_LABEL} characters"),
                ));
            }
            if let Some(c) = label
                .chars()
                .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
            {
                return Err(bad(
                    s,
                    format!("{c:?} is not allowed (letters, digits, '-' and '_'; international names in their xn-- form)"),
                ));
            }
            if label.starts_with('-') || label.ends_with('-') {
                return Err(bad(s, "a label starts or ends with '-'"));
            }
        }
        if labels
            .last()
            .is_some_and(|l| l.chars().all(|c| c.is_ascii_digit()))
        {
            return Err(bad(
                s,
                "it looks like an address but is not one (write IPv4 as four numbers)",
            ));
        }
        Ok(Host::Name(name.to_ascii_lowercase()))
    }
}

impl fmt::Display for Host {
    /// The name, or the address without brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// One allowlist entry: an exact host, or `*.suffix` for every name below the suffix
/// (not the suffix itself); with `:port`, that port only.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rule {
    pattern: Pattern,
    port: Option<u16>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Pattern {
    Exact(Host),
    /// The suffix without `*.`, normalised.
    Below(String),
}

impl Rule {
    pub fn matches(&self, host: &Host, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match (&self.pattern, host) {
            (Pattern::Exact(h), _) => h == host,
            (Pattern::Below(suffix), Host::Name(name)) => name
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (Pattern::Below(_), Host::Ip(_)) => false,
        }
    }
}

impl FromStr for Rule {
    type Err = PolicyError;

    fn from_str(entry: &str) -> Result<Rule, PolicyError> {
        if entry.len() > MAX_NAME + 8 {
            return Err(PolicyError::TooLong {
                entry: entry.chars().take(40).collect::<String>() + "…",
            });
        }
        if entry.contains("://") || entry.contains('/') {
            return Err(bad(
                entry,
                "write the host only, without a scheme or a path",
            ));
        }
        let (host, port) = split_port(entry)?;
        let pattern = match host.strip_prefix("*.") {
            Some(suffix) => match Host::parse(suffix) {
                Ok(Host::Name(n)) if n.contains('.') => Pattern::Below(n),
                Ok(Host::Name(_)) => {
                    return Err(bad(
                        entry,
                        "a wildcard needs at least two labels after \"*.\" (a whole top-level domain is too broad)",
                    ))
                }
                Ok(Host::Ip(_)) => {
                    return Err(bad(entry, "an IP address can only be listed exactly, without \"*.\""))
                }
                Err(PolicyError::BadName { problem, .. }) => return Err(bad(entry, problem)),
                Err(_) => return Err(PolicyError::TooLong { entry: entry.into() }),
            },
            None if host.contains('*') => {
                return Err(bad(entry, "'*' is only allowed as a whole first label, as in *.example.com"))
            }
            None => match Host::parse(host) {
                Ok(h) => Pattern::Exact(h),
                Err(PolicyError::BadName { problem, .. }) => return Err(bad(entry, problem)),
                Err(_) => return Err(PolicyError::TooLong { entry: entry.into() }),
            },
        };
        Ok(Rule { pattern, port })
    }
}

/// `host[:port]`, `[v6][:port]`, or a bare IPv6 address.
fn split_port(entry: &str) -> Result<(&str, Option<u16>), PolicyError> {
    let bad_port = || PolicyError::BadPort {
        entry: entry.into(),
    };
    let parse_port = |p: &str| match p.parse::<u16>() {
        Ok(n) if n > 0 && p.chars().all(|c| c.is_ascii_digit()) => Ok(n),
        _ => Err(bad_port()),
    };
    if entry.starts_with('[') {
        return match entry.split_once(']') {
            Some((_, "")) => Ok((entry, None)),
            Some((v6, rest)) => match rest.strip_prefix(':') {
                Some(p) => Ok((&entry[..v6.len() + 1], Some(parse_port(p)?))),
                None => Err(bad(entry, "unexpected text after ']'")),
            },
            None => Err(bad(entry, "'[' without ']'")),
        };
    }
    match entry.matches(':').count() {
        0 => Ok((entry, None)),
        1 => {
            let (host, port) = entry.split_once(':').expect("one colon");
            Ok((host, Some(parse_port(port)?)))
        }
        _ => Ok((entry, None)), // a bare IPv6 address; Host::parse says if it is not one
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.pattern, self.port) {
            (Pattern::Below(s), _) => write!(f, "*.{s}")?,
            (Pattern::Exact(Host::Ip(IpAddr::V6(v6))), _) => write!(f, "[{v6}]")?,
            (Pattern::Exact(h), _) => write!(f, "{h}")?,
        }
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

/// The hosts a session may reach in `allow` mode: never empty, at most
/// [`MAX_ENTRIES`], every entry valid, no duplicates, in the order written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allowlist {
    rules: Vec<Rule>,
}

impl Allowlist {
    /// A list from entries as written (`pypi.org`, `*.example.com`, `host:8443`,
    /// `10.1.2.3`, `[::1]:80`, `@python-packages`).
    pub fn new<S: AsRef<str>>(
        entries: impl IntoIterator<Item = S>,
    ) -> Result<Allowlist, PolicyError> {
        let mut rules = Vec::new();
        let mut seen = BTreeSet::new();
        let mut push = |rule: Rule, rules: &mut Vec<Rule>| {
            if seen.insert(rule.clone()) {
                rules.push(rule);
            }
        };
        for entry in entries {
            let entry = entry.as_ref().trim();
            if entry.is_empty() {
                return Err(PolicyError::EmptyEntry);
            }
            if let Some(name) = entry.strip_prefix('@') {
                let preset = PRESETS
                    .iter()
                    .find(|p| p.name.eq_ignore_ascii_case(name))
                    .ok_or_else(|| PolicyError::UnknownPreset {
                        name: name.into(),
                        known: PRESETS
                            .iter()
                            .map(|p| format!("@{}", p.name))
                            .collect::<Vec<_>>()
                            .join(", "),
                    })?;
                for host in preset.hosts {
                    push(host.parse().expect("presets are valid"), &mut rules);
                }
            } else {
                push(entry.parse()?, &mut rules);
            }
            if rules.len() > MAX_ENTRIES {
                return Err(PolicyError::TooMany { count: rules.len() });
            }
        }
        if rules.is_empty() {
            return Err(PolicyError::Empty);
        }
        Ok(Allowlist { rules })
    }

    /// The hosts of a preset.
    pub fn preset(preset: &Preset) -> Allowlist {
        Allowlist::new(preset.hosts).expect("presets are valid")
    }

    /// Whether `host:port` may be reached (by name: the address it resolves to is
    /// checked afterwards, by the resolver).
    pub fn allows(&self, host: &Host, port: u16) -> bool {
        self.rules.iter().any(|r| r.matches(host, port))
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }
}

impl FromStr for Allowlist {
    type Err = PolicyError;

    /// Comma-separated entries, as after `allow:`.
    fn from_str(s: &str) -> Result<Allowlist, PolicyError> {
        if s.trim().is_empty() {
            return Err(PolicyError::Empty);
        }
        Allowlist::new(s.split(','))
    }
}

impl fmt::Display for Allowlist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.rules.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl Serialize for Allowlist {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.rules.iter().map(|r| r.to_string()))
    }
}

impl<'de> Deserialize<'de> for Allowlist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let entries = Vec::<String>::deserialize(d)?;
        Allowlist::new(entries).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(s: &str) -> Host {
        Host::parse(s).unwrap()
    }

    #[test]
    fn modes_parse_and_print_back() {
        assert_eq!("off".parse::<NetworkMode>().unwrap(), NetworkMode::Off);
        assert_eq!(" FULL ".parse::<NetworkMode>().unwrap(), NetworkMode::Full);
        let m: NetworkMode = "allow:pypi.org,files.pythonhosted.org,*.Example.com."
            .parse()
            .unwrap();
        assert_eq!(
            m.to_string(),
            "allow:pypi.org,files.pythonhosted.org,*.example.com"
        );
        assert_eq!(m.to_string().parse::<NetworkMode>().unwrap(), m);
        let m: NetworkMode = "allow:[::1]:8080,10.1.2.3,::2,mirror.test:8443"
            .parse()
            .unwrap();
        assert_eq!(
            m.to_string(),
            "allow:[::1]:8080,10.1.2.3,[::2],mirror.test:8443"
        );
        assert_eq!(m.to_string().parse::<NetworkMode>().unwrap(), m);
    }

    #[test]
    fn presets_expand_and_are_listed() {
        let m: NetworkMode = "allow:@python-packages,pypi.org,extra.test"
            .parse()
            .unwrap();
        assert_eq!(
            m.to_string(),
            "allow:pypi.org,files.pythonhosted.org,extra.test"
        );
        let p = presets()
            .iter()
            .find(|p| p.name == "python-packages")
            .unwrap();
        assert_eq!(p.label, "Python packages");
        assert_eq!(
            Allowlist::preset(p).to_string(),
            "pypi.org,files.pythonhosted.org"
        );
        let e = "allow:@nope".parse::<NetworkMode>().unwrap_err();
        assert!(e.to_string().contains("@python-packages"), "{e}");
    }

    #[test]
    fn bad_modes_and_entries_say_why() {
        let err = |s: &str| s.parse::<NetworkMode>().unwrap_err();
        assert!(matches!(err("on"), PolicyError::UnknownMode { .. }));
        assert!(matches!(err("allow"), PolicyError::UnknownMode { .. }));
        assert_eq!(err("allow:"), PolicyError::Empty);
        assert_eq!(err("allow: "), PolicyError::Empty);
        assert_eq!(err("allow:a.test,,b.test"), PolicyError::EmptyEntry);
        assert_eq!(err("allow:a.test,"), PolicyError::EmptyEntry);
        for name in [
            "exa mple.com",
            "-a.com",
            "a-.com",
            "a..com",
            "a.com..",
            "ex@mple.com",
            "bücher.de",
            "127.1",
            "2130706433",
            "a.*.com",
            "*",
            "*.com",
            "*.10.0.0.1",
            "[example.com]",
            "[::1",
            "[::1]x",
            "http://a.com",
            "a.com/path",
        ] {
            assert!(
                matches!(err(&format!("allow:{name}")), PolicyError::BadName { .. }),
                "{name}: {:?}",
                err(&format!("allow:{name}"))
            );
        }
        for entry in [
            "a.com:0",
            "a.com:65536",
            "a.com:x",
            "a.com:",
            "a.com:+80",
            "[::1]:0",
        ] {
            assert!(
                matches!(err(&format!("allow:{entry}")), PolicyError::BadPort { .. }),
                "{entry}"
            );
        }
        let long = format!("{}.com", "a".repeat(250));
        assert!(matches!(
            err(&format!("allow:{long}")),
            PolicyError::TooLong { .. }
        ));
        let label = format!("{}.com", "a".repeat(64));
        assert!(matches!(
            err(&format!("allow:{label}")),
            PolicyError::BadName { .. }
        ));
        let many: Vec<String> = (0..=MAX_ENTRIES).map(|i| format!("h{i}.test")).collect();
        assert_eq!(
            Allowlist::new(&many).unwrap_err(),
            PolicyError::TooMany {
                count: MAX_ENTRIES + 1
            }
        );
        assert!(Allowlist::new(&many[..MAX_ENTRIES]).is_ok());
        // The message names the entry and what to do.
        let e = err("allow:pypi.org,*.com").to_string();
        assert!(e.contains("\"*.com\"") && e.contains("too broad"), "{e}");
    }

    #[test]
    fn rules_match_exact_hosts_and_subdomains_of_wildcards() {
        let list: Allowlist = "pypi.org,*.example.com,mirror.test:8443,10.1.2.3,[::1]"
            .parse()
            .unwrap();
        let yes = |h: &str, p: u16| list.allows(&host(h), p);
        assert!(yes("pypi.org", 443));
        assert!(yes("PyPI.org.", 80));
        assert!(!yes("www.pypi.org", 443));
        assert!(!yes("pypi.org.evil.test", 443));
        assert!(yes("a.example.com", 443));
        assert!(yes("a.b.Example.COM", 443));
        assert!(
            !yes("example.com", 443),
            "the bare suffix is not below itself"
        );
        assert!(!yes("badexample.com", 443));
        assert!(!yes("com", 443));
        assert!(yes("mirror.test", 8443));
        assert!(!yes("mirror.test", 443));
        assert!(yes("10.1.2.3", 1));
        assert!(!yes("10.1.2.4", 1));
        assert!(yes("[::1]", 5));
        assert!(yes("::1", 5));
        assert!(
            !yes("::ffff:10.1.2.3", 1),
            "another spelling is another address"
        );
    }

    #[test]
    fn modes_serialise_in_snake_case_and_validate_when_read() {
        let m: NetworkMode = "allow:pypi.org,*.example.com".parse().unwrap();
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"allow":["pypi.org","*.example.com"]}"#
        );
        assert_eq!(
            serde_json::to_string(&NetworkMode::Off).unwrap(),
            r#""off""#
        );
        assert_eq!(
            serde_json::to_string(&NetworkMode::Full).unwrap(),
            r#""full""#
        );
        let back: NetworkMode =
            serde_json::from_str(r#"{"allow":["pypi.org","*.example.com"]}"#).unwrap();
        assert_eq!(back, m);
        assert!(serde_json::from_str::<NetworkMode>(r#"{"allow":[]}"#).is_err());
        assert!(serde_json::from_str::<NetworkMode>(r#"{"allow":["*.com"]}"#).is_err());
        assert!(NetworkMode::Full.exposure().contains("169.254.169.254"));
    }
}
