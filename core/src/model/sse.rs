//! A Server-Sent Events parser: bytes in, events out.
//!
//! It follows the WHATWG event-stream rules that the three providers rely on: lines end
//! with LF, CRLF or CR; `event:` names the event, `data:` lines accumulate (joined by
//! LF); a blank line dispatches; lines starting with `:` are comments (keep-alives);
//! one space after the colon is dropped. It is push-based (feed it chunks as they
//! arrive) so a line split across network reads is handled, and it works on bytes so a
//! multi-byte UTF-8 character split across reads is too. One event may hold at most
//! a limit of bytes ([`Parser::with_limit`]): past it the parser keeps nothing more and
//! says so ([`Parser::overflowed`]), so a line without end cannot grow the process.

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field; empty when the server sent none (Chat Completions never does).
    pub event: String,
    pub data: String,
}

pub struct Parser {
    /// Bytes of a line not finished yet.
    line: Vec<u8>,
    /// The previous chunk ended in CR: a LF at the start of the next one belongs to it.
    after_cr: bool,
    event: String,
    data: Vec<String>,
    /// Whether any field was seen since the last dispatch (a lone blank line is no event).
    pending: bool,
    /// Bytes of the event being read (its lines so far).
    size: usize,
    limit: usize,
    overflowed: bool,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::with_limit(usize::MAX)
    }
}

impl Parser {
    pub fn new() -> Parser {
        Parser::default()
    }

    /// A parser that stops at the first event larger than `limit` bytes.
    pub fn with_limit(limit: usize) -> Parser {
        Parser {
            line: Vec::new(),
            after_cr: false,
            event: String::new(),
            data: Vec::new(),
            pending: false,
            size: 0,
            limit,
            overflowed: false,
        }
    }

    /// An event passed the limit: nothing after it was (or will be) parsed.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Feed the next chunk of the body; returns the events it completed.
    pub fn push(&mut self, mut chunk: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        if self.overflowed {
            return out;
        }
        if self.after_cr {
            self.after_cr = false;
            if chunk.first() == Some(&b'\n') {
                chunk = &chunk[1..];
            }
        }
        let mut i = 0;
        while i < chunk.len() {
            match chunk[i] {
                b'\n' => {
                    self.end_line(&mut out);
                    i += 1;
                }
                b'\r' => {
                    self.end_line(&mut out);
                    if i + 1 == chunk.len() {
                        self.after_cr = true;
                    } else if chunk[i + 1] == b'\n' {
                        i += 1;
                    }
                    i += 1;
                }
                _ => {
                    let end = chunk[i..]
                        .iter()
                        .position(|b| *b == b'\n' || *b == b'\r')
                        .map_or(chunk.len(), |p| i + p);
                    self.size += end - i;
                    if self.size > self.limit {
                        self.overflowed = true;
                        self.line = Vec::new();
                        self.data = Vec::new();
                        return out;
                    }
                    self.line.extend_from_slice(&chunk[i..end]);
                    i = end;
                }
            }
        }
        out
    }

    /// The body ended. A final event without its blank line is still dispatched: some
    /// servers close the connection right after the last `data:` line.
    pub fn finish(&mut self) -> Option<Event> {
        let mut out = Vec::new();
        if self.overflowed {
            return None;
        }
        if !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.dispatch(&mut out);
        out.pop()
    }

    fn end_line(&mut self, out: &mut Vec<Event>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            // Keep-alives are not part of the event.
            self.size -= line.len().min(self.size);
            return;
        }
        let text = String::from_utf8_lossy(&line);
        let (field, value) = match text.find(':') {
            Some(p) => {
                let v = &text[p + 1..];
                (&text[..p], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (text.as_ref(), ""),
        };
        match field {
            "event" => {
                self.event = value.to_string();
                self.pending = true;
            }
            "data" => {
                self.data.push(value.to_string());
                self.pending = true;
            }
            // `id` and `retry` matter to browsers reconnecting, not to one-shot replies.
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        self.size = 0;
        if !self.pending {
            return;
        }
        self.pending = false;
        out.push(Event {
            event: std::mem::take(&mut self.event),
            data: std::mem::take(&mut self.data).join("\n"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<Event> {
        let mut p = Parser::new();
        let mut v: Vec<Event> = chunks.iter().flat_map(|c| p.push(c)).collect();
        v.extend(p.finish());
        v
    }

    fn ev(event: &str, data: &str) -> Event {
        Event {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_split_anywhere_come_out_whole() {
        let body = "event: a\ndata: {\"x\":1}\n\n: keep-alive\n\ndata: second\ndata: line\n\n";
        let want = vec![ev("a", "{\"x\":1}"), ev("", "second\nline")];
        for split in 0..body.len() {
            let (x, y) = body.as_bytes().split_at(split);
            assert_eq!(all(&[x, y]), want, "split at {split}");
        }
        // One byte at a time too.
        let bytes: Vec<&[u8]> = body.as_bytes().chunks(1).collect();
        assert_eq!(all(&bytes), want);
    }

    #[test]
    fn crlf_cr_and_missing_space_are_accepted() {
        assert_eq!(
            all(&[b"event:x\r\ndata:1\r", b"\n\r\ndata: 2\r\r"]),
            vec![ev("x", "1"), ev("", "2")]
        );
    }

    #[test]
    fn a_last_event_without_blank_line_is_kept_and_utf8_survives_splits() {
        let s = "data: caf\u{e9} \u{1f600}";
        let b = s.as_bytes();
        assert_eq!(
            all(&[&b[..10], &b[10..]]),
            vec![ev("", "caf\u{e9} \u{1f600}")]
        );
        assert_eq!(all(&[b"\n\n: only a comment\n\n"]), vec![]);
    }

    #[test]
    fn an_event_past_the_limit_stops_the_parser_and_keeps_nothing_of_it() {
        let mut p = Parser::with_limit(32);
        let mut got = p.push(b"data: small\n\ndata: ");
        assert_eq!(got, vec![ev("", "small")]);
        assert!(!p.overflowed());
        // One line without end, fed in pieces: the parser holds at most the limit.
        for _ in 0..1000 {
            got.extend(p.push(&[b'x'; 64]));
            assert!(p.line.len() <= 32);
        }
        assert!(p.overflowed());
        got.extend(p.push(b"\n\ndata: later\n\n"));
        got.extend(p.finish());
        assert_eq!(got, vec![ev("", "small")]);
        // Many lines of one event count together; a dispatch starts the count again.
        let mut p = Parser::with_limit(32);
        assert_eq!(p.push(b"data: 0123456789\n\ndata: 0123456789\n\n").len(), 2);
        p.push(b"data: 0123456789\ndata: 0123456789\ndata: 0123456789\n");
        assert!(p.overflowed());
    }
}
