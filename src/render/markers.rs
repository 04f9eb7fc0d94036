//! The marker formats written from the styled text: Slack mrkdwn (`*bold*`, `_italic_`,
//! `~strike~`, `` `code` ``, ```` ``` ```` blocks, `<url|text>` links, `& < >` escaped
//! everywhere), WhatsApp (the same markers, links as `text (url)`, nothing escaped) and
//! plain text (no markers, links as `text (url)`). Quotes are `> ` at the start of each of
//! their lines in all three.

use super::styled::{Edge, SpanKind, Styled};

/// Which marker format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Slack,
    Whatsapp,
    Plain,
}

/// Writes `styled` in `dialect`.
pub(crate) fn write_markers(styled: &Styled, dialect: Dialect) -> String {
    let mut w = Writer {
        out: String::with_capacity(styled.text.len() + 16),
        dialect,
        quotes: 0,
        links: 0,
    };
    let mut at = 0;
    for (pos, edge) in styled.edges() {
        w.text(&styled.text[at..pos]);
        at = pos;
        match edge {
            Edge::Open(i) => w.open(&styled.spans[i].kind),
            Edge::Close(i) => {
                let span = &styled.spans[i];
                w.close(&span.kind, &styled.text[span.start..span.end]);
            }
        }
    }
    w.text(&styled.text[at..]);
    w.out
}

struct Writer {
    out: String,
    dialect: Dialect,
    quotes: usize,
    /// Open links (markers inside a Slack link label are not shown by Slack).
    links: usize,
}

impl Writer {
    /// Writes `text`, escaped for the dialect. Runs of bytes that need nothing are copied
    /// whole: every byte that does is ASCII, so the runs end on char boundaries.
    fn text(&mut self, text: &str) {
        let slack = self.dialect == Dialect::Slack;
        let bytes = text.as_bytes();
        let mut run = 0;
        let newlines = self.quotes > 0 || (self.links > 0 && slack);
        if !newlines {
            // Outside quotes and link labels only Slack's `& < >` change: found by a
            // vector search instead of a look at every byte.
            if slack {
                for i in memchr::memchr3_iter(b'&', b'<', b'>', bytes) {
                    self.out.push_str(&text[run..i]);
                    self.out.push_str(match bytes[i] {
                        b'&' => "&amp;",
                        b'<' => "&lt;",
                        _ => "&gt;",
                    });
                    run = i + 1;
                }
            }
            self.out.push_str(&text[run..]);
            return;
        }
        for (i, &b) in bytes.iter().enumerate() {
            let with: &str = match b {
                // A Slack link label is one line.
                b'\n' if self.links > 0 && slack => " ",
                b'\n' if self.quotes > 0 => "\n> ",
                b'&' if slack => "&amp;",
                b'<' if slack => "&lt;",
                b'>' if slack => "&gt;",
                _ => continue,
            };
            self.out.push_str(&text[run..i]);
            self.out.push_str(with);
            run = i + 1;
        }
        self.out.push_str(&text[run..]);
    }

    fn marker(&self, kind: &SpanKind) -> &'static str {
        if self.dialect == Dialect::Plain || (self.links > 0 && self.dialect == Dialect::Slack) {
            return "";
        }
        match kind {
            SpanKind::Bold => "*",
            SpanKind::Italic => "_",
            SpanKind::Strike => "~",
            SpanKind::Code => "`",
            SpanKind::Pre { .. } => "```",
            SpanKind::Link { .. } | SpanKind::Quote { .. } => "",
        }
    }

    fn open(&mut self, kind: &SpanKind) {
        match kind {
            SpanKind::Quote { .. } => {
                self.quotes += 1;
                // A quote marker works at a line start only; elsewhere (after a list
                // marker) it is text, escaped like any `>` in Slack.
                let line_start = self.out.is_empty() || self.out.ends_with('\n');
                if line_start || self.dialect != Dialect::Slack {
                    self.out.push_str("> ");
                } else {
                    self.out.push_str("&gt; ");
                }
            }
            SpanKind::Link { url } => {
                if self.dialect == Dialect::Slack {
                    self.out.push('<');
                    for c in url.chars() {
                        match c {
                            '&' => self.out.push_str("&amp;"),
                            '<' => self.out.push_str("&lt;"),
                            '>' => self.out.push_str("&gt;"),
                            '|' => self.out.push_str("%7C"),
                            c => self.out.push(c),
                        }
                    }
                    self.out.push('|');
                }
                self.links += 1;
            }
            kind => {
                let m = self.marker(kind);
                self.out.push_str(m);
            }
        }
    }

    fn close(&mut self, kind: &SpanKind, shown: &str) {
        match kind {
            SpanKind::Quote { .. } => self.quotes -= 1,
            SpanKind::Link { url } => {
                self.links -= 1;
                if self.dialect == Dialect::Slack {
                    self.out.push('>');
                } else if shown != url && url.strip_prefix("mailto:") != Some(shown) {
                    self.out.push_str(" (");
                    self.out.push_str(url);
                    self.out.push(')');
                }
            }
            kind => {
                let m = self.marker(kind);
                self.out.push_str(m);
            }
        }
    }
}
