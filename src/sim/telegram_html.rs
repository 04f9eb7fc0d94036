//! Telegram's `parse_mode=HTML`, read as strictly as Telegram reads it, for the simulated
//! chat: the allowed tags only (`b strong i em u ins s strike del a code pre tg-spoiler
//! blockquote span`), with their attributes (`a href`, `code class="language-…"`,
//! `span class="tg-spoiler"`, `blockquote expandable`) quoted; every tag closed, in order;
//! `<`, `>` and `&` in text only as the entities `&lt; &gt; &amp; &quot;` or numeric ones;
//! no tag inside `code` or `pre` but `pre`'s one `code`, no link in a link, no quote in a
//! quote. What Telegram refuses is an error ("can't parse entities: …"); what it accepts is
//! the text it shows, whose UTF-16 length is what its limit counts.
//!
//! Written from the Bot API's rules, apart from the crate's renderer, so that the chat
//! judges the renderer rather than repeating it.

/// Reads `html` as Telegram does: the visible text, or why Telegram refuses it.
pub(crate) fn visible_text(html: &str) -> Result<String, String> {
    let mut text = String::with_capacity(html.len());
    let mut open: Vec<&str> = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(['<', '>', '&']) {
        text.push_str(&rest[..i]);
        let at = &rest[i..];
        match at.as_bytes()[0] {
            b'>' => return Err(refusal("unescaped '>' in text")),
            b'&' => {
                let end = at
                    .find(';')
                    .filter(|&e| e <= 10)
                    .ok_or_else(|| refusal("unescaped '&' in text"))?;
                text.push(entity(&at[1..end])?);
                rest = &at[end + 1..];
            }
            _ => {
                let end = at.find('>').ok_or_else(|| refusal("unclosed start tag"))?;
                tag(&at[1..end], &mut open)?;
                rest = &at[end + 1..];
            }
        }
    }
    text.push_str(rest);
    match open.last() {
        Some(name) => Err(refusal(&format!(
            "can't find end tag corresponding to <{name}>"
        ))),
        None => Ok(text),
    }
}

fn refusal(why: &str) -> String {
    format!("Bad Request: can't parse entities: {why}")
}

/// The char an entity reference (between `&` and `;`) stands for.
fn entity(name: &str) -> Result<char, String> {
    let named = match name {
        "lt" => Some('<'),
        "gt" => Some('>'),
        "amp" => Some('&'),
        "quot" => Some('"'),
        _ => None,
    };
    if let Some(c) = named {
        return Ok(c);
    }
    let code = match name.strip_prefix('#') {
        Some(hex) if hex.starts_with(['x', 'X']) => u32::from_str_radix(&hex[1..], 16).ok(),
        Some(dec) => dec.parse::<u32>().ok(),
        None => None,
    };
    code.and_then(char::from_u32)
        .ok_or_else(|| refusal(&format!("unsupported entity &{name};")))
}

/// Tags Telegram knows, by name.
const TAGS: &[&str] = &[
    "b",
    "strong",
    "i",
    "em",
    "u",
    "ins",
    "s",
    "strike",
    "del",
    "a",
    "code",
    "pre",
    "tg-spoiler",
    "span",
    "blockquote",
];

/// One tag, `inside` the `<` and `>`: opens or closes it on `open`.
fn tag<'a>(inside: &'a str, open: &mut Vec<&'a str>) -> Result<(), String> {
    if let Some(name) = inside.strip_prefix('/') {
        let name = name.trim_end();
        return match open.pop() {
            Some(top) if top == name => Ok(()),
            Some(top) => Err(refusal(&format!(
                "unmatched end tag </{name}>, expected </{top}>"
            ))),
            None => Err(refusal(&format!("unexpected end tag </{name}>"))),
        };
    }
    let name_end = inside
        .find(|c: char| c.is_ascii_whitespace())
        .unwrap_or(inside.len());
    let name = &inside[..name_end];
    let Some(&name) = TAGS.iter().find(|&&t| t == name) else {
        return Err(refusal(&format!("unsupported start tag \"{name}\"")));
    };
    let attrs = attributes(&inside[name_end..])?;
    let parent = open.last().copied();
    if matches!(parent, Some("code")) || (parent == Some("pre") && name != "code") {
        return Err(refusal(&format!("<{name}> inside a code block")));
    }
    if name == "a" && open.contains(&"a") {
        return Err(refusal("nested links"));
    }
    if name == "blockquote" && open.contains(&"blockquote") {
        return Err(refusal("nested blockquotes"));
    }
    let allowed: &[&str] = match name {
        "a" => &["href"],
        "code" => &["class"],
        "span" => &["class"],
        "blockquote" => &["expandable"],
        _ => &[],
    };
    for (key, value) in &attrs {
        if !allowed.contains(key) {
            return Err(refusal(&format!("unsupported attribute {key} of <{name}>")));
        }
        if *key == "class" && name == "span" && value.as_deref() != Some("tg-spoiler") {
            return Err(refusal("a span must have class tg-spoiler"));
        }
        if *key == "class"
            && name == "code"
            && !value.as_deref().is_some_and(|v| v.starts_with("language-"))
        {
            return Err(refusal("a code class must be language-…"));
        }
    }
    if name == "a" && !attrs.iter().any(|(k, v)| *k == "href" && v.is_some()) {
        return Err(refusal("a link without href"));
    }
    if name == "span" && attrs.is_empty() {
        return Err(refusal("a span must have class tg-spoiler"));
    }
    open.push(name);
    Ok(())
}

/// The attributes of a start tag: `name="value"`, `name='value'`, or a bare `name`.
fn attributes(mut s: &str) -> Result<Vec<(&str, Option<String>)>, String> {
    let mut out = Vec::new();
    loop {
        s = s.trim_start();
        if s.is_empty() {
            return Ok(out);
        }
        let key_end = s
            .find(|c: char| c == '=' || c.is_ascii_whitespace())
            .unwrap_or(s.len());
        let key = &s[..key_end];
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(refusal("malformed attribute"));
        }
        s = &s[key_end..];
        let Some(after) = s.trim_start().strip_prefix('=') else {
            out.push((key, None));
            continue;
        };
        let after = after.trim_start();
        let quote = after
            .chars()
            .next()
            .filter(|&q| q == '"' || q == '\'')
            .ok_or_else(|| refusal("unquoted attribute value"))?;
        let body = &after[1..];
        let end = body
            .find(quote)
            .ok_or_else(|| refusal("unclosed attribute value"))?;
        let value = visible_text(&body[..end])?;
        out.push((key, Some(value)));
        s = &body[end + 1..];
    }
}

#[cfg(test)]
mod tests {
    use super::visible_text;

    #[test]
    fn reads_what_telegram_accepts() {
        assert_eq!(
            visible_text("<b>a &amp; <i>b</i></b> &lt;c&gt; &#128512;").unwrap(),
            "a & b <c> 😀"
        );
        assert_eq!(
            visible_text("<pre><code class=\"language-rs\">x</code></pre>").unwrap(),
            "x"
        );
        assert_eq!(
            visible_text("<a href=\"https://x.io/?a=1&amp;b=2\">l</a>").unwrap(),
            "l"
        );
        assert_eq!(
            visible_text("<blockquote expandable>q</blockquote>").unwrap(),
            "q"
        );
    }

    #[test]
    fn refuses_what_telegram_refuses() {
        for bad in [
            "a & b",
            "a < b",
            "a > b",
            "<b>open",
            "<b><i>x</b></i>",
            "<div>x</div>",
            "<a>x</a>",
            "<a href=x>x</a>",
            "<code><b>x</b></code>",
            "<a href=\"https://a\"><a href=\"https://b\">x</a></a>",
            "<blockquote><blockquote>x</blockquote></blockquote>",
            "<span>x</span>",
            "&bogus;",
            "</b>",
        ] {
            let e = visible_text(bad).expect_err(bad);
            assert!(e.starts_with("Bad Request: can't parse entities"), "{e}");
        }
    }
}
