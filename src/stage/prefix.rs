//! The response prefix (SPEC §7): a template rendered once per turn from the model and
//! identity, and prepended to the first message (or every message) of the turn.

use std::borrow::Cow;

/// The values a response prefix template may refer to. Each is optional; a variable whose
/// value is not set stays in the text verbatim, like an unknown variable.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PrefixContext {
    /// The model id as the provider names it, e.g. `anthropic/claude-3-5-sonnet-20241022`.
    pub model: Option<String>,
    /// The provider, e.g. `anthropic`. When unset, `{provider}` falls back to the part of
    /// `model` before its first `/`, if there is one.
    pub provider: Option<String>,
    /// The reasoning effort the model runs with, e.g. `high`.
    pub thinking_level: Option<String>,
    /// The assistant's display name.
    pub identity_name: Option<String>,
}

/// The short form of a model id: the provider prefix (everything up to the last `/`), an
/// 8-digit date suffix (`-20250219`) and a `-latest` suffix are removed, in any order and as
/// often as they occur at the end.
///
/// `anthropic/claude-3-5-sonnet-20241022` → `claude-3-5-sonnet`; `gpt-4o-latest` → `gpt-4o`.
pub fn short_model_name(model: &str) -> &str {
    let mut name = match model.rfind('/') {
        Some(slash) => &model[slash + 1..],
        None => model,
    };
    loop {
        if let Some(rest) = name.strip_suffix("-latest") {
            name = rest;
            continue;
        }
        let bytes = name.as_bytes();
        if bytes.len() >= 9 {
            let (head, tail) = bytes.split_at(bytes.len() - 9);
            if tail[0] == b'-' && tail[1..].iter().all(u8::is_ascii_digit) {
                // `head` ends before an ASCII '-', so it is a char boundary.
                name = &name[..head.len()];
                continue;
            }
        }
        return name;
    }
}

/// Renders a response prefix template.
///
/// Variables are written in braces and matched ignoring ASCII case:
/// `{model}` (the short model name, see [`short_model_name`]), `{modelFull}`, `{provider}`,
/// `{thinkingLevel}` (alias `{think}`), `{identity.name}` (alias `{identityName}`).
/// An unknown variable, or a known one whose value is not set, stays verbatim, braces
/// included. Everything outside variables is copied as it is.
pub fn render_prefix(template: &str, context: &PrefixContext) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            let name = &after[..close];
            variable_value(name, context).map(|v| (v, close))
        });
        match value {
            Some((v, close)) => {
                out.push_str(v);
                rest = &after[close + 1..];
            }
            None => {
                // Keep the brace and look for a variable right after it (`{{model}}`).
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn variable_value<'c>(name: &str, context: &'c PrefixContext) -> Option<&'c str> {
    let is = |candidate: &str| name.eq_ignore_ascii_case(candidate);
    if is("model") {
        context.model.as_deref().map(short_model_name)
    } else if is("modelFull") {
        context.model.as_deref()
    } else if is("provider") {
        context.provider.as_deref().or_else(|| {
            let model = context.model.as_deref()?;
            model.find('/').map(|slash| &model[..slash])
        })
    } else if is("thinkingLevel") || is("think") {
        context.thinking_level.as_deref()
    } else if is("identity.name") || is("identityName") {
        context.identity_name.as_deref()
    } else {
        None
    }
}

/// What goes between `prefix` and `text` when the prefix is applied, or `None` when it is
/// not: an empty prefix, a blank text, or a text that already starts with the prefix (never
/// twice). Before a text that starts with a block construct (see [`starts_with_block`]) a
/// line break, so the prefix stands on its own line and the construct still renders (glued,
/// `[bot] ```python` is inline code); else `" "`, or `""` when the prefix ends in
/// whitespace. Never more than one unit (see [`prefix_cost`]).
pub(crate) fn prefix_joiner(prefix: &str, text: &str) -> Option<&'static str> {
    let bare = prefix.trim_end();
    if bare.is_empty() || text.trim().is_empty() || text.trim_start().starts_with(bare) {
        return None;
    }
    if prefix.ends_with('\n') {
        return Some("");
    }
    if starts_with_block(text) {
        return Some("\n");
    }
    Some(if bare.len() == prefix.len() { " " } else { "" })
}

/// Whether the first line of `text` starts a block construct that a prefix glued before it
/// would break: a fence, a table row, a list item, a block quote, an ATX heading, a thematic
/// break, or indented code (4 columns or more; a send keeps a leading indentation only when
/// it makes code).
pub(crate) fn starts_with_block(text: &str) -> bool {
    let mut lines = text.split('\n');
    let first = lines.next().unwrap_or("");
    let first = first.strip_suffix('\r').unwrap_or(first);
    let columns = first
        .bytes()
        .take_while(|&b| b == b' ' || b == b'\t')
        .fold(0, |c, b| if b == b'\t' { c + 4 - c % 4 } else { c + 1 });
    if columns >= 4 {
        return !first.trim().is_empty();
    }
    let rest = first.trim_start_matches([' ', '\t']).as_bytes();
    let ends_marker = |i: usize| rest.get(i).is_none_or(|&b| b == b' ' || b == b'\t');
    let thematic = |c: u8| {
        rest.iter().filter(|&&b| b == c).count() >= 3
            && rest.iter().all(|&b| b == c || b == b' ' || b == b'\t')
    };
    let digits = rest
        .iter()
        .take(10)
        .take_while(|b| b.is_ascii_digit())
        .count();
    match rest.first() {
        None => false,
        Some(b'`') => rest.starts_with(b"```"),
        Some(b'~') => rest.starts_with(b"~~~"),
        Some(b'|' | b'>') => true,
        Some(b'#') => {
            let n = rest.iter().take_while(|&&b| b == b'#').count();
            n <= 6 && ends_marker(n)
        }
        Some(&c @ (b'-' | b'*' | b'+' | b'_')) => (c != b'_' && ends_marker(1)) || thematic(c),
        Some(_) if (1..=9).contains(&digits) => {
            matches!(rest.get(digits), Some(b'.' | b')')) && ends_marker(digits + 1)
        }
        // A table whose header row does not start with a pipe.
        Some(_) => {
            first.contains('|')
                && lines.next().is_some_and(|l| {
                    let l = l.trim_end_matches('\r').trim();
                    l.contains('|')
                        && l.contains('-')
                        && l.bytes().all(|b| matches!(b, b'|' | b'-' | b':' | b' '))
                })
        }
    }
}

/// Prepends `prefix` to `text`: joined with one space, or directly when the prefix already
/// ends in whitespace.
///
/// Nothing changes (and nothing is allocated) when the prefix is empty, when `text` is empty
/// or only whitespace (a media-only payload gets no caption made of the prefix alone), or
/// when `text`, ignoring leading whitespace, already starts with the prefix (ignoring the
/// prefix's trailing whitespace), so a prefix is never applied twice.
pub(crate) fn apply_prefix<'t>(prefix: &str, text: &'t str) -> Cow<'t, str> {
    let Some(space) = prefix_joiner(prefix, text) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(prefix.len() + space.len() + text.len());
    out.push_str(prefix);
    out.push_str(space);
    out.push_str(text);
    Cow::Owned(out)
}

/// The length, in `metric` units, that [`apply_prefix`] adds to a text at most: the prefix
/// plus the joining space when the prefix does not end in whitespace. Zero for an empty
/// prefix.
pub(crate) fn prefix_cost(prefix: &str, metric: crate::LengthMetric) -> usize {
    if prefix.trim_end().is_empty() {
        return 0;
    }
    // A space, or a line break before a block construct (even after a prefix that ends in
    // a space).
    metric.len(prefix) + usize::from(!prefix.ends_with('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> PrefixContext {
        PrefixContext {
            model: Some("anthropic/claude-3-5-sonnet-20241022".into()),
            provider: None,
            thinking_level: Some("high".into()),
            identity_name: Some("Clawd".into()),
        }
    }

    #[test]
    fn short_names() {
        assert_eq!(
            short_model_name("anthropic/claude-3-5-sonnet-20241022"),
            "claude-3-5-sonnet"
        );
        assert_eq!(short_model_name("gpt-4o-latest"), "gpt-4o");
        assert_eq!(short_model_name("openrouter/openai/gpt-4o"), "gpt-4o");
        assert_eq!(
            short_model_name("claude-opus-4-20250219-latest"),
            "claude-opus-4"
        );
        assert_eq!(short_model_name("model-2025"), "model-2025");
        assert_eq!(short_model_name("model-2025021a"), "model-2025021a");
        assert_eq!(short_model_name("-20250219"), "");
        assert_eq!(short_model_name("x/"), "");
        assert_eq!(short_model_name(""), "");
        assert_eq!(short_model_name("modèle-20250219"), "modèle");
    }

    #[test]
    fn renders_variables() {
        let c = ctx();
        assert_eq!(render_prefix("[{model}]", &c), "[claude-3-5-sonnet]");
        assert_eq!(
            render_prefix("{modelFull}", &c),
            "anthropic/claude-3-5-sonnet-20241022"
        );
        assert_eq!(render_prefix("{provider}", &c), "anthropic");
        assert_eq!(render_prefix("{thinkingLevel}/{think}", &c), "high/high");
        assert_eq!(
            render_prefix("{identity.name}:{identityName}", &c),
            "Clawd:Clawd"
        );
        let explicit = PrefixContext {
            provider: Some("bedrock".into()),
            ..ctx()
        };
        assert_eq!(render_prefix("{provider}", &explicit), "bedrock");
    }

    #[test]
    fn case_insensitive_and_verbatim() {
        let c = ctx();
        assert_eq!(render_prefix("{MODEL}", &c), "claude-3-5-sonnet");
        assert_eq!(
            render_prefix("{ModelFULL}", &c),
            "anthropic/claude-3-5-sonnet-20241022"
        );
        assert_eq!(render_prefix("{IDENTITY.NAME}", &c), "Clawd");
        assert_eq!(render_prefix("a {foo} b", &c), "a {foo} b");
        assert_eq!(render_prefix("{", &c), "{");
        assert_eq!(render_prefix("}{model", &c), "}{model");
        assert_eq!(render_prefix("{{model}}", &c), "{claude-3-5-sonnet}");
        assert_eq!(render_prefix("{ model }", &c), "{ model }");
        assert_eq!(render_prefix("é{model}ü", &c), "éclaude-3-5-sonnetü");
        // Known variables without a value stay verbatim.
        let empty = PrefixContext::default();
        assert_eq!(
            render_prefix("[{model}|{provider}]", &empty),
            "[{model}|{provider}]"
        );
        let gpt = PrefixContext {
            model: Some("gpt-4o-latest".into()),
            ..PrefixContext::default()
        };
        assert_eq!(render_prefix("{model}", &gpt), "gpt-4o");
        assert_eq!(render_prefix("{provider}", &gpt), "{provider}");
    }

    #[test]
    fn applies_once() {
        assert_eq!(apply_prefix("[bot]", "hello"), "[bot] hello");
        assert_eq!(apply_prefix("[bot] ", "hello"), "[bot] hello");
        assert_eq!(apply_prefix("[bot]\n", "hello"), "[bot]\nhello");
        assert!(matches!(
            apply_prefix("[bot]", "[bot] hello"),
            Cow::Borrowed(_)
        ));
        assert_eq!(apply_prefix("[bot] ", "[bot] hello"), "[bot] hello");
        assert_eq!(apply_prefix("[bot]", "  [bot] hello"), "  [bot] hello");
        assert_eq!(apply_prefix("", "hello"), "hello");
        assert_eq!(apply_prefix("  ", "hello"), "hello");
        assert_eq!(apply_prefix("[bot]", ""), "");
        assert_eq!(apply_prefix("[bot]", " \n"), " \n");
        // Applying twice is the same as once.
        let once = apply_prefix("[bot]", "hi").into_owned();
        assert_eq!(apply_prefix("[bot]", &once), once);
    }

    #[test]
    fn goes_on_its_own_line_before_a_block_construct() {
        for text in [
            "```python\nprint(1)\n```",
            "~~~\nx\n~~~",
            "| a | b |\n|---|---|",
            "a | b\n--- | ---",
            "- item",
            "* item",
            "+ item",
            "12. step",
            "3) step",
            "> quote",
            "## Heading",
            "#",
            "---",
            "* * *",
            "___",
            "    indented code",
            "  ```\ncode\n  ```",
        ] {
            assert_eq!(
                apply_prefix("[bot]", text),
                format!("[bot]\n{text}"),
                "{text:?}"
            );
            assert_eq!(
                apply_prefix("[bot] ", text),
                format!("[bot] \n{text}"),
                "{text:?}"
            );
            assert_eq!(
                apply_prefix("[bot]\n", text),
                format!("[bot]\n{text}"),
                "{text:?}"
            );
        }
        for text in [
            "hello",
            "#hashtag",
            "-5 degrees",
            "2024 was a year",
            "`code` span",
            "``",
            "a | b",
            "**bold**",
            "1.5 litres",
        ] {
            assert_eq!(
                apply_prefix("[bot]", text),
                format!("[bot] {text}"),
                "{text:?}"
            );
        }
    }

    #[test]
    fn cost_matches_application() {
        use crate::LengthMetric;
        for prefix in ["[bot]", "[bot] ", "🦀", "", " "] {
            for metric in LengthMetric::ALL {
                for text in ["hello", "```\nx\n```"] {
                    let applied = apply_prefix(prefix, text);
                    assert!(
                        metric.len(&applied) - metric.len(text) <= prefix_cost(prefix, metric),
                        "{prefix:?} {metric}"
                    );
                }
                // The cost is what the widest joining takes.
                let applied = apply_prefix(prefix, "```\nx\n```");
                assert_eq!(
                    metric.len(&applied) - metric.len("```\nx\n```"),
                    prefix_cost(prefix, metric),
                    "{prefix:?} {metric}"
                );
            }
        }
    }
}
