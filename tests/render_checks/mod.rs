//! Checkers for rendered formats, written from the platforms' rules and independent of the
//! renderer: a Telegram HTML reader (allowed tags, nesting, escaping) and a judge that reads
//! the same Markdown with pulldown-cmark and says what each visible character must look like.

#![allow(dead_code)]

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use replystream::{Format, RenderOptions, render};

/// How a visible character shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Look {
    pub(crate) bold: bool,
    pub(crate) italic: bool,
    pub(crate) strike: bool,
    /// Inline code or a code block.
    pub(crate) code: bool,
    pub(crate) quote: bool,
    pub(crate) link: Option<String>,
}

/// A span Telegram shows: its type (entity names), UTF-16 range, URL and language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TgSpan {
    pub(crate) kind: &'static str,
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) url: Option<String>,
    pub(crate) language: Option<String>,
}

/// What Telegram shows for an HTML message: the text and the spans (in opening order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TgMessage {
    pub(crate) text: String,
    pub(crate) spans: Vec<TgSpan>,
}

/// Reads `html` as Telegram's `parse_mode=HTML` does, strictly: only the allowed tags and
/// attributes, quoted attribute values, every tag closed in order, `<`, `>` and `&` only as
/// markup or entities (`&lt; &gt; &amp; &quot;` and numeric), no tag inside `code`/`pre` but
/// `pre`'s one `code`, no quote in a quote, no link in a link. Err says what Telegram refuses.
pub(crate) fn read_telegram_html(html: &str) -> Result<TgMessage, String> {
    let mut text = String::new();
    let mut units = 0usize;
    // (tag, span index or usize::MAX)
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut spans: Vec<TgSpan> = Vec::new();
    let mut chars = html.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '<' => {
                let end = html[i..]
                    .find('>')
                    .ok_or_else(|| format!("unclosed tag at {i}"))?
                    + i;
                let inner = &html[i + 1..end];
                while chars.peek().is_some_and(|&(j, _)| j <= end) {
                    chars.next();
                }
                if let Some(name) = inner.strip_prefix('/') {
                    let (open, span) = stack.pop().ok_or_else(|| format!("stray </{name}>"))?;
                    if open != name {
                        return Err(format!("</{name}> closes <{open}>"));
                    }
                    if span != usize::MAX {
                        spans[span].end = units;
                    }
                    continue;
                }
                let (name, attrs) = inner.split_once(' ').unwrap_or((inner, ""));
                let parent = stack.last().map(|(t, _)| t.as_str());
                if matches!(parent, Some("code")) || (parent == Some("pre") && name != "code") {
                    return Err(format!("<{name}> inside <{}>", parent.unwrap()));
                }
                let (kind, url, language) = match (name, attrs) {
                    ("b" | "strong", "") => ("bold", None, None),
                    ("i" | "em", "") => ("italic", None, None),
                    ("s" | "strike" | "del", "") => ("strikethrough", None, None),
                    ("u" | "ins", "") => ("underline", None, None),
                    ("tg-spoiler", "") => ("spoiler", None, None),
                    ("span", "class=\"tg-spoiler\"") => ("spoiler", None, None),
                    ("code", "") => ("code", None, None),
                    ("code", a) if parent == Some("pre") => {
                        let lang = attr(a, "class")?
                            .strip_prefix("language-")
                            .ok_or("code class without language-")?
                            .to_owned();
                        // Folds into the enclosing pre.
                        let pre = stack.last().unwrap().1;
                        spans[pre].language = Some(lang);
                        stack.push((name.to_owned(), usize::MAX));
                        continue;
                    }
                    ("pre", "") => ("pre", None, None),
                    ("a", a) => ("text_link", Some(attr(a, "href")?), None),
                    ("blockquote", "") => ("blockquote", None, None),
                    ("blockquote", "expandable") => ("expandable_blockquote", None, None),
                    _ => return Err(format!("tag not allowed: <{inner}>")),
                };
                if kind == "text_link" && stack.iter().any(|(t, _)| t == "a") {
                    return Err("a link in a link".into());
                }
                if kind.ends_with("blockquote") && stack.iter().any(|(t, _)| t == "blockquote") {
                    return Err("a quote in a quote".into());
                }
                if name == "code" && parent == Some("pre") {
                    stack.push((name.to_owned(), usize::MAX));
                    continue;
                }
                spans.push(TgSpan {
                    kind,
                    start: units,
                    end: usize::MAX,
                    url,
                    language,
                });
                stack.push((name.to_owned(), spans.len() - 1));
            }
            '>' => return Err(format!("unescaped > at {i}")),
            '&' => {
                let end = html[i..]
                    .find(';')
                    .ok_or_else(|| format!("bare & at {i}"))?
                    + i;
                let name = &html[i + 1..end];
                let decoded = match name {
                    "lt" => '<',
                    "gt" => '>',
                    "amp" => '&',
                    "quot" => '"',
                    _ => name
                        .strip_prefix('#')
                        .and_then(|n| n.parse::<u32>().ok())
                        .and_then(char::from_u32)
                        .ok_or_else(|| format!("unknown entity &{name};"))?,
                };
                while chars.peek().is_some_and(|&(j, _)| j <= end) {
                    chars.next();
                }
                text.push(decoded);
                units += decoded.len_utf16();
            }
            c => {
                text.push(c);
                units += c.len_utf16();
            }
        }
    }
    if let Some((open, _)) = stack.last() {
        return Err(format!("<{open}> never closed"));
    }
    Ok(TgMessage { text, spans })
}

fn attr(attrs: &str, name: &str) -> Result<String, String> {
    let value = attrs
        .strip_prefix(name)
        .and_then(|r| r.strip_prefix("=\""))
        .and_then(|r| r.strip_suffix('"'))
        .ok_or_else(|| format!("bad attribute {attrs:?}"))?;
    if value.contains(['"', '<', '>']) {
        return Err(format!("unescaped character in attribute {value:?}"));
    }
    Ok(value
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&"))
}

/// The characters of a Telegram message with their look.
pub(crate) fn looks_of(message: &TgMessage) -> Vec<(char, Look)> {
    let mut out = Vec::new();
    let mut unit = 0;
    for c in message.text.chars() {
        let mut look = Look::default();
        for s in &message.spans {
            if s.start <= unit && unit < s.end {
                match s.kind {
                    "bold" => look.bold = true,
                    "italic" => look.italic = true,
                    "strikethrough" => look.strike = true,
                    "code" | "pre" => look.code = true,
                    "blockquote" | "expandable_blockquote" => look.quote = true,
                    "text_link" => look.link = s.url.clone(),
                    _ => {}
                }
            }
        }
        out.push((c, look));
        unit += c.len_utf16();
    }
    out
}

/// Whether a chat accepts `url` as a link target (absolute http(s), mailto, tg).
pub(crate) fn linkable(url: &str) -> bool {
    ["http://", "https://", "mailto:", "tg://"]
        .iter()
        .any(|s| url.to_ascii_lowercase().starts_with(s))
        && url.len() > 8
        && !url.contains(char::is_whitespace)
}

/// What pulldown-cmark shows for `markdown`, laid out as a chat without Markdown shows it:
/// list markers as text (`•`, `N.` numbered from the list's start), a rule as a line of
/// `─`, headings bold, table cells as code (table mode `code`), images as links, links a
/// chat cannot open as `text (url)`, raw HTML as text.
pub(crate) fn judge(markdown: &str) -> Vec<(char, Look)> {
    let parser = Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    );
    let mut out: Vec<(char, Look)> = Vec::new();
    let mut look = Look::default();
    let (mut bold, mut italic, mut strike, mut quote) = (0, 0, 0, 0);
    let mut lists: Vec<Option<u64>> = Vec::new();
    let mut links: Vec<(String, usize, bool)> = Vec::new();
    let mut in_table = false;
    let mut in_code_block = false;
    let push = |out: &mut Vec<(char, Look)>, s: &str, look: &Look| {
        out.extend(s.chars().map(|c| (c, look.clone())));
    };
    for event in parser {
        look.bold = bold > 0;
        look.italic = italic > 0;
        look.strike = strike > 0;
        look.quote = quote > 0;
        match event {
            Event::Start(tag) => match &tag {
                Tag::Heading { .. } => bold += 1,
                Tag::Strong => bold += 1,
                Tag::Emphasis => italic += 1,
                Tag::Strikethrough => strike += 1,
                Tag::BlockQuote(_) => quote += 1,
                Tag::CodeBlock(_) => in_code_block = true,
                Tag::List(start) => lists.push(*start),
                Tag::Item => {
                    let marker = match lists.last_mut() {
                        Some(Some(n)) => {
                            *n += 1;
                            format!("{}.", *n - 1)
                        }
                        _ => "•".to_owned(),
                    };
                    let plain = Look {
                        quote: look.quote,
                        ..Look::default()
                    };
                    push(&mut out, &marker, &plain);
                }
                Tag::Table(_) => in_table = true,
                Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                    let ok = linkable(dest_url);
                    if ok {
                        look.link = Some(dest_url.to_string());
                    }
                    let image = matches!(tag, Tag::Image { .. });
                    links.push((dest_url.to_string(), out.len(), image));
                }
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Heading(_) | TagEnd::Strong => bold -= 1,
                TagEnd::Emphasis => italic -= 1,
                TagEnd::Strikethrough => strike -= 1,
                TagEnd::BlockQuote(_) => quote -= 1,
                TagEnd::CodeBlock => in_code_block = false,
                TagEnd::List(_) => {
                    lists.pop();
                }
                TagEnd::Table => in_table = false,
                TagEnd::Link | TagEnd::Image => {
                    let (url, start, _image) = links.pop().unwrap();
                    look.link = None;
                    let outer = Look {
                        bold: bold > 0,
                        italic: italic > 0,
                        strike: strike > 0,
                        quote: quote > 0,
                        ..Look::default()
                    };
                    let empty = out[start..].iter().all(|(c, _)| c.is_whitespace());
                    if empty && !url.is_empty() {
                        let l = if linkable(&url) {
                            Look {
                                link: Some(url.clone()),
                                ..outer.clone()
                            }
                        } else {
                            outer.clone()
                        };
                        push(&mut out, &url, &l);
                    } else if !linkable(&url) {
                        let shown: String = out[start..].iter().map(|(c, _)| c).collect();
                        if !url.is_empty() && shown != url {
                            push(&mut out, &format!(" ({url})"), &outer);
                        }
                    }
                }
                _ => {}
            },
            ref e @ (Event::Text(ref t)
            | Event::Html(ref t)
            | Event::InlineHtml(ref t)
            | Event::Code(ref t)) => {
                let inline_code = matches!(e, Event::Code(_));
                // Inline code, and text in a code block, show as code. A table is laid out
                // in a code block: its cells show no other markup.
                let l = if in_table {
                    Look {
                        code: true,
                        quote: look.quote,
                        ..Look::default()
                    }
                } else {
                    Look {
                        code: in_code_block || inline_code,
                        ..look.clone()
                    }
                };
                push(&mut out, t, &l);
            }
            Event::Rule => push(
                &mut out,
                "──────────",
                &Look {
                    quote: quote > 0,
                    ..Look::default()
                },
            ),
            _ => {}
        }
    }
    out
}

/// The characters that must match: no whitespace, and in code no `-` or `|` (a table laid
/// out in a code block draws its lines with them).
pub(crate) fn comparable(chars: Vec<(char, Look)>) -> Vec<(char, Look)> {
    chars
        .into_iter()
        .filter(|(c, look)| !c.is_whitespace() && !(look.code && (*c == '-' || *c == '|')))
        .collect()
}

/// Asserts two look sequences are equal, with the first difference shown in context.
pub(crate) fn assert_same_looks(what: &str, got: &[(char, Look)], want: &[(char, Look)]) {
    // A bare URL in text is a link for the renderer (the chats link it themselves) and
    // text for CommonMark: the same look otherwise.
    let same = |g: &(char, Look), w: &(char, Look)| {
        g.0 == w.0
            && (g.1 == w.1
                || (w.1.link.is_none()
                    && g.1.link.as_deref().is_some_and(|u| u.starts_with("http"))
                    && Look {
                        link: None,
                        ..g.1.clone()
                    } == w.1))
    };
    let n = got.len().min(want.len());
    let first = (0..n).find(|&i| !same(&got[i], &want[i])).unwrap_or(n);
    if first == n && got.len() == want.len() {
        return;
    }
    let ctx = |v: &[(char, Look)]| {
        v[first.saturating_sub(20)..(first + 20).min(v.len())]
            .iter()
            .map(|(c, _)| *c)
            .collect::<String>()
    };
    panic!(
        "{what}: visible characters differ at {first}\n got: {:?} {:?}\nwant: {:?} {:?}\n got context: {}\nwant context: {}",
        got.get(first).map(|x| x.0),
        got.get(first).map(|x| &x.1),
        want.get(first).map(|x| x.0),
        want.get(first).map(|x| &x.1),
        ctx(got),
        ctx(want)
    );
}

/// The Telegram HTML of `md` is accepted by Telegram's rules and shows what pulldown-cmark
/// shows, and the entities format gives the same text and the same spans.
pub(crate) fn check_telegram(md: &str) {
    let opts = RenderOptions::default();
    let out = render(md, Format::TelegramHtml, &opts).text;
    let message = read_telegram_html(&out).unwrap_or_else(|e| panic!("refused: {e}\n{out}"));
    assert_same_looks(md, &comparable(looks_of(&message)), &comparable(judge(md)));
    let ents = render(md, Format::TelegramEntities, &opts);
    assert_eq!(ents.text, message.text, "entities text for {md:?}");
    let spans: Vec<_> = ents
        .entities
        .iter()
        .map(|e| {
            (
                e.kind.name(),
                e.offset,
                e.offset + e.length,
                e.url.clone(),
                e.language.clone(),
            )
        })
        .collect();
    let want: Vec<_> = message
        .spans
        .iter()
        .map(|s| (s.kind, s.start, s.end, s.url.clone(), s.language.clone()))
        .collect();
    assert_eq!(spans, want, "entities for {md:?}");
}
