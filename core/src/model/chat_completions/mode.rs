//! How one Chat Completions model is asked for its calls ([`CallMode`]), from the
//! `tool_calls` setting, and when `auto` changes its mind: a hosted API keeps native
//! calls; a server on this machine or the local network (llama.cpp, Ollama, LM Studio)
//! starts native and moves to schema steps after the first reply that should have
//! been a call and was not. That reply is not shown: the same turn is asked again.

use crate::conversation::{Answer, CallMode, Item, Reply, ToolSpec};
use crate::model::config::sampling::ToolCalls;
use crate::model::config::ProviderConfig;
use crate::protocol::PRELUDE_CALL_ID;

/// The mode now, why, and whether `auto` may still move it.
#[derive(Clone, Debug)]
pub struct ModeState {
    pub mode: CallMode,
    pub reason: String,
    watching: bool,
    /// Whether `auto` moved after a reply of this model (not set, not resumed).
    pub learned: bool,
    /// The id the step being streamed gets, so the live view and the call agree.
    pub(super) call_id: String,
    /// The notes earlier step turns ended with, repeated where they were.
    pub(super) notes: super::steps::SentNotes,
}

impl ModeState {
    pub fn new(config: &ProviderConfig) -> ModeState {
        let set = config.sampling.tool_calls.unwrap_or_default();
        let (mode, reason, watching) = match set {
            ToolCalls::Native => (CallMode::Native, "set: tool_calls = \"native\"", false),
            ToolCalls::Schema => (CallMode::Schema, "set: tool_calls = \"schema\"", false),
            ToolCalls::Text => (CallMode::Text, "set: tool_calls = \"text\"", false),
            ToolCalls::Auto if is_local(&config.base_url) => (
                CallMode::Native,
                "auto: a local server, native calls until one does not come",
                true,
            ),
            ToolCalls::Auto => (CallMode::Native, "auto: a hosted API", false),
        };
        ModeState {
            mode,
            reason: reason.into(),
            watching,
            learned: false,
            call_id: String::new(),
            notes: Default::default(),
        }
    }

    /// An earlier ask settled on `mode` (`why` says which): go on in it.
    pub fn resume(&mut self, mode: CallMode, why: &str) {
        if self.watching && mode != self.mode {
            self.mode = mode;
            self.reason = format!("auto: {why}");
            self.watching = false;
        }
    }

    /// Whether `reply` (as the server sent it, before calls written as text were
    /// read) makes `auto` move to schema steps: tools were offered, no native call
    /// came, and the reply was meant to be one: it held a call written as text, the
    /// model had made no call yet (the app's own first cell is not the model's), or
    /// files the task names are still missing (only a call can make them).
    pub fn switches(
        &mut self,
        tools: &[ToolSpec],
        items: &[Item],
        answer: &Answer,
        reply: &Reply,
        recovered: bool,
    ) -> bool {
        if !self.watching || tools.is_empty() || reply.tool_calls().next().is_some() {
            return false;
        }
        let first = !items
            .iter()
            .any(|i| matches!(i, Item::ToolCall { call_id, .. } if call_id != PRELUDE_CALL_ID));
        let missing = *answer != Answer::Open;
        if !(recovered || first || missing) {
            return false;
        }
        self.mode = CallMode::Schema;
        self.reason = if recovered {
            "auto: the model wrote a call as text instead of a native call".into()
        } else if first {
            "auto: the model's first reply held no native call".into()
        } else {
            "auto: a reply held no native call while the task's files were missing".into()
        };
        self.watching = false;
        self.learned = true;
        true
    }
}

/// A server on this machine or the local network: loopback, a private or link-local
/// address, `localhost`, a `.local` or dotless host name.
pub fn is_local(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback() || (ip.segments()[0] & 0xfe00) == 0xfc00,
        Err(_) => {
            let d = host.trim_end_matches('.');
            d == "localhost"
                || d.ends_with(".localhost")
                || d.ends_with(".local")
                || d.ends_with(".internal")
                || !d.contains('.')
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_servers_are_told_from_hosted_apis() {
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "http://192.168.1.20:1234/v1",
            "http://10.0.0.5/v1",
            "http://[::1]:8080/v1",
            "http://gpu-box:8000/v1",
            "http://ollama.local/v1",
        ] {
            assert!(is_local(local), "{local}");
        }
        for hosted in [
            "https://api.openai.com/v1",
            "https://openrouter.ai/api/v1",
            "https://8.8.8.8/v1",
            "not a url",
        ] {
            assert!(!is_local(hosted), "{hosted}");
        }
    }
}
