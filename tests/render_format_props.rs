//! Property tests of the renderer over random Markdown (emoji, CJK, CRLF, stray markup):
//! no panic, Telegram HTML always accepted, entities in range and on UTF-16 boundaries, no
//! visible character lost, Slack text escaped, Discord changed only where it must be; and
//! over generated well-formed replies, Telegram shows what pulldown-cmark reads.

mod render_checks;

use proptest::prelude::*;
use render_checks::{check_telegram, read_telegram_html};
use replystream::{Format, RenderOptions, TableMode, render};

/// Pieces random Markdown is made of: words in several scripts, and markup that may or may
/// not form constructs.
const PIECES: &[&str] = &[
    "word",
    "Ab9",
    "日本語",
    "한국",
    "👨‍👩‍👧",
    "🇫🇷",
    "e\u{301}",
    "😀",
    " ",
    " ",
    "  ",
    "\n",
    "\n",
    "\r\n",
    "\n\n",
    "**",
    "*",
    "_",
    "__",
    "~~",
    "~",
    "`",
    "```",
    "~~~",
    "[",
    "]",
    "](https://x.io/p_q)",
    "(",
    ")",
    "![",
    "<",
    ">",
    "&",
    "|",
    "- ",
    "1. ",
    "2) ",
    "> ",
    "# ",
    "    ",
    "\t",
    "\\",
    "---",
    "|---|---|",
    "<https://a.io/b>",
    "https://c.io/d_e.",
    "@everyone",
    "@here",
    "<b>",
    "</b>",
    "&amp",
    "#",
];

fn markdown() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..60).prop_map(|v| v.concat())
}

/// Letters, digits and other word characters of `text` outside fence lines (an info
/// string is not shown) and outside entity references, in order.
fn word_chars(text: &str) -> Vec<char> {
    let mut out = Vec::new();
    for line in text.split('\n') {
        // Container markers (quotes, list items) may come before a fence.
        let t = line.trim_start_matches(|c: char| " \t>-*+.)".contains(c) || c.is_ascii_digit());
        if t.starts_with("```") || t.starts_with("~~~") {
            continue;
        }
        // (Ordered list numbers are renumbered as CommonMark numbers them.)
        out.extend(t.chars().filter(|c| c.is_alphanumeric()));
    }
    out
}

fn is_subsequence(needle: &[char], hay: &[char]) -> bool {
    let mut it = hay.iter();
    needle.iter().all(|c| it.any(|h| h == c))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn every_format_renders_random_markdown_safely(md in markdown()) {
        for mode in [None, Some(TableMode::Code), Some(TableMode::Bullets), Some(TableMode::Off)] {
            let opts = RenderOptions { table_mode: mode, ..RenderOptions::default() };
            let html = render(&md, Format::TelegramHtml, &opts).text;
            let message = read_telegram_html(&html);
            prop_assert!(message.is_ok(), "refused {:?}: {:?}\n{}", md, message, html);
            let message = message.unwrap();
            prop_assert!(!html.contains('\r'));

            let ents = render(&md, Format::TelegramEntities, &opts);
            prop_assert_eq!(&ents.text, &message.text);
            let units: Vec<u16> = ents.text.encode_utf16().collect();
            for e in &ents.entities {
                prop_assert!(e.length > 0 && e.offset + e.length <= units.len(), "{:?}", e);
                for at in [e.offset, e.offset + e.length] {
                    let inside_pair = units.get(at).is_some_and(|u| (0xDC00..0xE000).contains(u));
                    prop_assert!(!inside_pair, "entity edge inside a surrogate pair: {:?}", e);
                }
            }

            // Nothing the model wrote is lost: plain text shows every word character.
            let plain = render(&md, Format::Plain, &opts).text;
            let shown: Vec<char> = plain.chars().collect();
            prop_assert!(is_subsequence(&word_chars(&md), &shown), "lost characters: {:?} -> {:?}", md, plain);
            let visible: Vec<char> = message.text.chars().collect();
            prop_assert!(
                is_subsequence(&word_chars(&md).into_iter().filter(|c| !c.is_ascii()).collect::<Vec<_>>(), &visible),
                "telegram lost characters: {:?} -> {:?}", md, message.text
            );

            // Slack: `<` only opens a link `<url|text>`, `>` only closes one, `&` only
            // starts an escape.
            let slack = render(&md, Format::SlackMrkdwn, &opts).text;
            check_slack(&slack).map_err(|e| TestCaseError::fail(format!("{e}: {md:?} -> {slack:?}")))?;

            let _ = render(&md, Format::Whatsapp, &opts);
        }
        // Markdown is the input as written; Discord only adds zero-width spaces to mass
        // mentions when there is no table to lay out.
        prop_assert_eq!(render(&md, Format::Markdown, &RenderOptions::default()).text, md.clone());
        if !md.contains('|') {
            let discord = render(&md, Format::Discord, &RenderOptions::default()).text;
            prop_assert_eq!(discord.replace('\u{200B}', ""), md.clone());
            prop_assert!(!discord.contains("@everyone") || md.contains("```") || md.contains("~~~") || md.contains("    ") || md.contains('\t'));
        }
    }

    #[test]
    fn well_formed_replies_show_on_telegram_as_commonmark_reads_them(md in reply()) {
        check_telegram(&md);
    }
}

fn check_slack(text: &str) -> Result<(), String> {
    let mut rest = text;
    while let Some(p) = rest.find(['<', '>', '&']) {
        let tail = &rest[p..];
        // A quote's marker: `> ` at a line start (nested quotes are not drawn).
        let line_start = p == 0
            && (rest.len() == text.len() || text[..text.len() - rest.len()].ends_with('\n'))
            || rest[..p].ends_with('\n');
        if tail.starts_with("> ") && line_start {
            rest = &tail[2..];
            continue;
        }
        if let Some(after) = tail.strip_prefix('&') {
            if !(tail.starts_with("&amp;") || tail.starts_with("&lt;") || tail.starts_with("&gt;"))
            {
                return Err("bare &".into());
            }
            rest = after;
        } else if tail.starts_with('<') {
            let end = tail.find('>').ok_or("unclosed <")?;
            let link = &tail[1..end];
            if !link.contains('|') || link.contains('<') {
                return Err(format!("< that is no link: {link:?}"));
            }
            rest = &tail[end + 1..];
        } else {
            return Err("bare >".into());
        }
    }
    Ok(())
}

/// Well-formed replies: paragraphs of words with emphasis, code and links, headings, lists
/// (nested), quotes, fenced code and tables, separated by blank lines.
fn reply() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "alpha", "béta", "日本", "😀", "x_y", "2*3", "a&b", "x<y>", "👍🏽", "end.",
    ]);
    let inline = (word.clone(), 0..7usize).prop_map(|(w, k)| match k {
        0 => format!("**{w}**"),
        1 => format!("*{w}*"),
        2 => format!("`{w}`"),
        3 => format!("[{w}](https://ex.io/{k})"),
        4 => format!("~~{w}~~"),
        _ => w.to_owned(),
    });
    let line = prop::collection::vec(inline, 1..6).prop_map(|v| v.join(" "));
    let block = (line.clone(), prop::collection::vec(line, 1..4), 0..7usize).prop_map(
        |(first, lines, k)| match k {
            0 => format!("# {first}"),
            1 => lines
                .iter()
                .map(|l| format!("- {l}"))
                .collect::<Vec<_>>()
                .join("\n"),
            2 => lines
                .iter()
                .enumerate()
                .map(|(i, l)| format!("{}. {l}\n   - {first}", i + 1))
                .collect::<Vec<_>>()
                .join("\n"),
            3 => lines
                .iter()
                .map(|l| format!("> {l}"))
                .collect::<Vec<_>>()
                .join("\n"),
            4 => format!("```js\n{}\n```", lines.join("\n")),
            5 => format!(
                "| h | {first} |\n|---|:-:|\n{}",
                lines
                    .iter()
                    .map(|l| format!("| {l} | x |"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            _ => lines.join("\n"),
        },
    );
    prop::collection::vec(block, 1..6).prop_map(|v| v.join("\n\n"))
}
