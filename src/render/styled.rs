//! Styled text: the visible text of a send plus properly nested spans over it (byte
//! ranges). Telegram HTML, Telegram entities and the marker formats are all written from
//! this one layout, so the HTML and the entities can never show different spans.

/// What a span does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SpanKind {
    Bold,
    Italic,
    Strike,
    /// Inline code.
    Code,
    /// A code block.
    Pre {
        language: Option<String>,
    },
    Link {
        url: String,
    },
    Quote {
        expandable: bool,
    },
}

/// A span over `text[start..end]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) kind: SpanKind,
}

/// Text and spans in pre-order (a span comes before the spans inside it); spans nest
/// properly and none is empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Styled {
    pub(crate) text: String,
    pub(crate) spans: Vec<Span>,
}

/// One boundary of a span while walking the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edge {
    Open(usize),
    Close(usize),
}

impl Styled {
    /// Opens a span at the current end of the text; returns its index for [`Styled::close`].
    pub(crate) fn open(&mut self, kind: SpanKind) -> usize {
        let at = self.text.len();
        self.spans.push(Span {
            start: at,
            end: usize::MAX,
            kind,
        });
        self.spans.len() - 1
    }

    /// Closes span `index` at the current end of the text.
    pub(crate) fn close(&mut self, index: usize) {
        self.spans[index].end = self.text.len();
    }

    /// Drops empty spans and trims the text's surrounding whitespace (chats drop it, and
    /// Telegram refuses entities outside the text), moving spans with it.
    pub(crate) fn finish(&mut self) {
        let keep = self.text.trim_end().len();
        let lead = keep - self.text[..keep].trim_start().len();
        self.text.truncate(keep);
        self.text.drain(..lead);
        for span in &mut self.spans {
            span.start = span.start.clamp(lead, keep) - lead;
            span.end = span.end.clamp(lead, keep) - lead;
        }
        self.spans.retain(|s| s.start < s.end);
    }

    /// The span boundaries in text order: at one position closes come before opens, inner
    /// spans close before outer ones and outer spans open before inner ones.
    pub(crate) fn edges(&self) -> Vec<(usize, Edge)> {
        let mut edges = Vec::with_capacity(self.spans.len() * 2);
        for (i, s) in self.spans.iter().enumerate() {
            edges.push((s.start, Edge::Open(i)));
            edges.push((s.end, Edge::Close(i)));
        }
        edges.sort_by(|a, b| {
            a.0.cmp(&b.0).then_with(|| match (a.1, b.1) {
                (Edge::Close(x), Edge::Close(y)) => y.cmp(&x),
                (Edge::Open(x), Edge::Open(y)) => x.cmp(&y),
                (Edge::Close(_), Edge::Open(_)) => std::cmp::Ordering::Less,
                (Edge::Open(_), Edge::Close(_)) => std::cmp::Ordering::Greater,
            })
        });
        edges
    }
}
