//! Rendering at the send: each send's Markdown is rendered once, when the dispatcher lets it
//! leave (never per push), into the configured format. Reasoning sends are quoted
//! (Telegram: `<blockquote expandable>`). A preview's text is built in Markdown by the
//! preview stage (healed tail, cursor, Telegram's `**>`…`||` notation for the reasoning at
//! its top); here the notation becomes a real quote and the cursor is put back after the
//! rendered text, outside any tag. A send whose text was rendered to be measured against
//! the limit ([`super::Measured`]) posts that render: it is not rendered a second time.

use super::{Format, Measured, RenderOptions, Rendered, render};
use crate::action::{SendKind, SendOp};
use crate::payload::{Lane, Payload};

/// The format and options every send of one engine is rendered with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SendRenderer {
    format: Format,
    options: RenderOptions,
    /// The preview cursor, put back outside any tag.
    cursor: Option<String>,
}

impl SendRenderer {
    pub(crate) fn new(format: Format, options: RenderOptions, cursor: Option<String>) -> Self {
        SendRenderer {
            format,
            options,
            cursor,
        }
    }

    /// The format sends are rendered in.
    pub(crate) fn format(&self) -> Format {
        self.format
    }

    /// The length of a send's text once posted, counted as the platform counts its limit
    /// (see [`crate::posted_len`]; Telegram: the visible text of the HTML, cursor included),
    /// in `metric`: what the preview, like every send, must keep within its limit.
    pub(crate) fn posted_units(
        &self,
        payload: &Payload,
        kind: SendKind,
        op: SendOp,
        metric: crate::LengthMetric,
    ) -> usize {
        let visible = match self.format {
            // Telegram counts the text after entity parsing: the entities' text.
            Format::TelegramHtml => SendRenderer {
                format: Format::TelegramEntities,
                ..self.clone()
            },
            _ => self.clone(),
        };
        match visible.render(payload, kind, op) {
            Some(out) => metric.len(&out.text),
            None => metric.len(&payload.text),
        }
    }

    /// The rendered form of a send, `None` when the text to post is the Markdown itself
    /// (format `markdown`: no copy) or there is nothing to post (a delete).
    pub(crate) fn render(&self, payload: &Payload, kind: SendKind, op: SendOp) -> Option<Rendered> {
        self.render_measured(payload, kind, op, None)
    }

    /// [`SendRenderer::render`], posting `measured` when it is the render of this send (its
    /// Markdown, rendered with the options this send is rendered with) instead of rendering
    /// the text again. The caller keeps the text unchanged since it was measured.
    pub(crate) fn render_measured(
        &self,
        payload: &Payload,
        kind: SendKind,
        op: SendOp,
        measured: Option<Measured>,
    ) -> Option<Rendered> {
        if self.format == Format::Markdown || matches!(op, SendOp::Delete { .. }) {
            return None;
        }
        if let Some(m) = measured
            && kind != SendKind::Preview
        {
            let text = payload.text.as_str();
            let options = self.options.on_lane(payload.lane);
            let whole =
                payload.lane == Lane::Reasoning || split_expandable_notation(text).is_none();
            if whole && m.renders(text, self.format, &options) {
                let out = m.into_rendered();
                debug_assert_eq!(out, render(text, self.format, &options), "{text:?}");
                return Some(out);
            }
        }
        let mut markdown = payload.text.as_str();
        let owned;
        let mut cursor = None;
        if kind == SendKind::Preview
            && let Some(c) = self.cursor.as_deref()
            && let Some(at) = markdown.rfind(c)
            && markdown[at + c.len()..]
                .chars()
                .all(|ch| matches!(ch, '`' | '~' | '\n' | ' '))
        {
            owned = [&markdown[..at], &markdown[at + c.len()..]].concat();
            markdown = &owned;
            cursor = Some(c);
        }
        let quoted = RenderOptions {
            quote: true,
            ..self.options
        };
        let mut out = if payload.lane == Lane::Reasoning {
            render(markdown, self.format, &quoted)
        } else if let Some((reasoning, rest)) = split_expandable_notation(markdown) {
            let top = render(&reasoning, self.format, &quoted);
            let body = render(rest, self.format, &self.options);
            join(top, body)
        } else {
            render(markdown, self.format, &self.options)
        };
        if let Some(c) = cursor {
            out.text.push_str(c);
        }
        Some(out)
    }
}

/// Splits a preview's top quote in Telegram's expandable notation (`**> first`, `> next`,
/// …, `last||`, then a blank line) into the quoted Markdown (markers removed) and the rest.
fn split_expandable_notation(markdown: &str) -> Option<(String, &str)> {
    let quote = markdown.strip_prefix("**>")?;
    let (quote, rest) = match quote.find("||\n\n") {
        Some(end) => (&quote[..end], &quote[end + 4..]),
        None => (quote.strip_suffix("||")?, ""),
    };
    let mut inner = String::with_capacity(quote.len());
    for (i, line) in quote.split('\n').enumerate() {
        let line = if i == 0 {
            line
        } else {
            line.strip_prefix('>').unwrap_or(line)
        };
        if i > 0 {
            inner.push('\n');
        }
        inner.push_str(line.strip_prefix(' ').unwrap_or(line));
    }
    Some((inner, rest))
}

/// Two rendered parts one after the other, a blank line between (entities of the second
/// moved by the first's UTF-16 length).
fn join(mut top: Rendered, body: Rendered) -> Rendered {
    if body.text.is_empty() {
        return top;
    }
    if top.text.is_empty() {
        return body;
    }
    let shift = top.text.encode_utf16().count() + 2;
    top.text.push_str("\n\n");
    top.text.push_str(&body.text);
    top.entities.extend(body.entities.into_iter().map(|mut e| {
        e.offset += shift;
        e
    }));
    top
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LengthMetric;
    use crate::render::measure;

    /// A render kept from a measure is posted only where it is the send's own render (same
    /// format, options, quote and length), and what is posted is always the fresh render.
    #[test]
    fn a_measured_render_is_posted_only_where_it_is_the_sends() {
        let md = "1. one & <two>\n2. [three](https://x.io/a?b=1&c=2)\n\n| a | b |\n|---|---|\n| 1 | 22 |";
        let plain = RenderOptions::default();
        let quoted = RenderOptions {
            quote: true,
            ..plain
        };
        for format in Format::ALL {
            let r = SendRenderer::new(format, plain, None);
            for lane in [Lane::Answer, Lane::Reasoning] {
                let payload = Payload {
                    lane,
                    ..Payload::text(md)
                };
                let fresh = r.render(&payload, SendKind::Block, SendOp::CREATE);
                for options in [plain, quoted] {
                    let (units, m) = measure(md, format, &options, LengthMetric::Utf16);
                    assert_eq!(
                        units,
                        crate::posted_len(md, format, &options, LengthMetric::Utf16)
                    );
                    let own = options.quote == (lane == Lane::Reasoning);
                    if let Some(m) = &m {
                        assert!(m.renders(md, format, &options));
                        assert!(!m.renders(&md[1..], format, &options));
                        let posted = r.render_measured(
                            &payload,
                            SendKind::Block,
                            SendOp::CREATE,
                            Some(m.clone()),
                        );
                        assert_eq!(posted, fresh, "{format:?} {lane:?} quote {}", options.quote);
                        // Format `markdown` posts the Markdown itself, never a render.
                        if own && format != Format::Markdown {
                            assert_eq!(Some(m.clone().into_rendered()), fresh);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn preview_notation_and_cursor() {
        let r = SendRenderer::new(
            Format::TelegramHtml,
            RenderOptions::default(),
            Some("█".into()),
        );
        let p = Payload::text("**> plan **it**\n> twice||\n\n```rs\nlet a = 1 < 2;█\n```");
        let out = r.render(
            &p,
            SendKind::Preview,
            SendOp::Edit {
                key: crate::MessageKey(1),
            },
        );
        assert_eq!(
            out.unwrap().text,
            "<blockquote expandable>plan <b>it</b>\ntwice</blockquote>\n\n\
             <pre><code class=\"language-rs\">let a = 1 &lt; 2;</code></pre>█"
        );
        let e = SendRenderer::new(Format::TelegramEntities, RenderOptions::default(), None);
        let p = Payload::text("**> 😀 a||\n\n**b**");
        let out = e.render(&p, SendKind::Preview, SendOp::CREATE).unwrap();
        assert_eq!(out.text, "😀 a\n\nb");
        let got: Vec<_> = out
            .entities
            .iter()
            .map(|e| (e.kind.name(), e.offset, e.length))
            .collect();
        assert_eq!(got, [("expandable_blockquote", 0, 4), ("bold", 6, 1)]);
    }

    #[test]
    fn markdown_sends_are_not_copied() {
        let r = SendRenderer::new(Format::Markdown, RenderOptions::default(), None);
        assert_eq!(
            r.render(&Payload::text("**a**"), SendKind::Block, SendOp::CREATE),
            None
        );
    }
}
