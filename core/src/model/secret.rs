//! API keys, kept out of sight.
//!
//! A key lives in an [`ApiKey`], which has no `Display`, redacts itself in `Debug` and
//! is only read where a request header is built. Anything a server says back passes
//! through [`redact`] before it reaches an error message, because some providers echo
//! (part of) the key they rejected.

use std::fmt;

/// An API key. `Debug` prints `ApiKey(***)`; there is no `Display` on purpose.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Surrounding whitespace (a pasted newline) is dropped; an empty key is no key.
    pub fn new(key: impl Into<String>) -> Option<ApiKey> {
        let key = key.into().trim().to_string();
        (!key.is_empty()).then_some(ApiKey(key))
    }

    /// The secret itself, for building a request header and for redaction only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Where a key came from: named in error messages so the user knows what to fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// An environment variable, e.g. `OPENAI_API_KEY`.
    Env(String),
    /// The OS keychain: service `sandalyst`, this account.
    Keychain(String),
    /// Given directly by the program that built the provider (tests, the desktop app).
    Direct,
    /// No key; fine for local servers.
    None,
}

impl KeySource {
    /// How to name the setting to fix, e.g. "OPENAI_API_KEY".
    pub fn setting(&self) -> String {
        match self {
            KeySource::Env(var) => var.clone(),
            KeySource::Keychain(account) => {
                format!("the OS keychain entry (service \"sandalyst\", account \"{account}\")")
            }
            KeySource::Direct => "the API key setting".into(),
            KeySource::None => "the API key setting (none is set)".into(),
        }
    }
}

/// A key and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    pub key: Option<ApiKey>,
    pub source: KeySource,
}

impl Credentials {
    pub fn none() -> Credentials {
        Credentials {
            key: None,
            source: KeySource::None,
        }
    }

    pub fn direct(key: &str) -> Credentials {
        match ApiKey::new(key) {
            Some(k) => Credentials {
                key: Some(k),
                source: KeySource::Direct,
            },
            None => Credentials::none(),
        }
    }
}

/// Remove a key, and anything shaped like one, from text a server or library produced.
pub fn redact(text: &str, key: Option<&ApiKey>) -> String {
    let mut s = text.to_string();
    if let Some(k) = key {
        if k.expose().len() >= 4 {
            s = s.replace(k.expose(), "[redacted]");
        }
    }
    // Providers' key formats (sk-..., sk-ant-..., sk-proj-...) even when partly masked.
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(p) = rest.find("sk-") {
        let at_word_start = p == 0 || !rest.as_bytes()[p - 1].is_ascii_alphanumeric();
        let tail = &rest[p..];
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '*' | '.')))
            .unwrap_or(tail.len());
        out.push_str(&rest[..p]);
        if at_word_start && len >= 12 {
            out.push_str("sk-[redacted]");
        } else {
            out.push_str(&tail[..len.max(3)]);
        }
        rest = &tail[len.max(3)..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_show() {
        let k = ApiKey::new(" sk-test-0123456789abcdef\n").unwrap();
        assert_eq!(format!("{k:?}"), "ApiKey(***)");
        let c = Credentials {
            key: Some(k.clone()),
            source: KeySource::Env("OPENAI_API_KEY".into()),
        };
        assert!(!format!("{c:?}").contains("0123456789"));
        assert!(ApiKey::new("  ").is_none());
        let msg = "Incorrect API key provided: sk-test-0123456789abcdef. Or sk-proj-****cdef1234.";
        let r = redact(msg, Some(&k));
        assert!(!r.contains("0123456789") && !r.contains("cdef1234"), "{r}");
        assert_eq!(redact("task-list is fine", None), "task-list is fine");
        let odd = ApiKey::new("plainsecretvalue").unwrap();
        assert_eq!(redact("got plainsecretvalue", Some(&odd)), "got [redacted]");
    }
}
