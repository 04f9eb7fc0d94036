//! Telegram HTML (`parse_mode=HTML`): the styled text with `& < >` escaped, spans as the
//! tags Telegram accepts (`b i s code pre a blockquote`, `pre` + `code class="language-…"`
//! for a code block with a language, `blockquote expandable`), every tag closed in the
//! message, `"` escaped in attributes.

use super::styled::{Edge, SpanKind, Styled};

/// Writes `styled` as Telegram HTML.
pub(crate) fn write_html(styled: &Styled) -> String {
    let mut out = String::with_capacity(styled.text.len() + styled.spans.len() * 12);
    let mut at = 0;
    for (pos, edge) in styled.edges() {
        escape_text(&styled.text[at..pos], &mut out);
        at = pos;
        match edge {
            Edge::Open(i) => open_tag(&styled.spans[i].kind, &mut out),
            Edge::Close(i) => close_tag(&styled.spans[i].kind, &mut out),
        }
    }
    escape_text(&styled.text[at..], &mut out);
    out
}

fn open_tag(kind: &SpanKind, out: &mut String) {
    match kind {
        SpanKind::Bold => out.push_str("<b>"),
        SpanKind::Italic => out.push_str("<i>"),
        SpanKind::Strike => out.push_str("<s>"),
        SpanKind::Code => out.push_str("<code>"),
        SpanKind::Pre { language: None } => out.push_str("<pre>"),
        SpanKind::Pre {
            language: Some(lang),
        } => {
            out.push_str("<pre><code class=\"language-");
            escape_attr(lang, out);
            out.push_str("\">");
        }
        SpanKind::Link { url } => {
            out.push_str("<a href=\"");
            escape_attr(url, out);
            out.push_str("\">");
        }
        SpanKind::Quote { expandable: false } => out.push_str("<blockquote>"),
        SpanKind::Quote { expandable: true } => out.push_str("<blockquote expandable>"),
    }
}

fn close_tag(kind: &SpanKind, out: &mut String) {
    out.push_str(match kind {
        SpanKind::Bold => "</b>",
        SpanKind::Italic => "</i>",
        SpanKind::Strike => "</s>",
        SpanKind::Code => "</code>",
        SpanKind::Pre { language: None } => "</pre>",
        SpanKind::Pre { language: Some(_) } => "</code></pre>",
        SpanKind::Link { .. } => "</a>",
        SpanKind::Quote { .. } => "</blockquote>",
    });
}

/// Escapes `&`, `<` and `>` in text.
pub(crate) fn escape_text(text: &str, out: &mut String) {
    let mut last = 0;
    for i in memchr::memchr3_iter(b'&', b'<', b'>', text.as_bytes()) {
        let rep = match text.as_bytes()[i] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            _ => "&gt;",
        };
        out.push_str(&text[last..i]);
        out.push_str(rep);
        last = i + 1;
    }
    out.push_str(&text[last..]);
}

/// Escapes `&`, `<`, `>` and `"` in an attribute value.
fn escape_attr(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("&quot;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}
