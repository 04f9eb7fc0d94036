//! The numbered defects of issue 16, each as one input and one setting, with what the chat
//! user must see: shared by the tests of every face (the Rust API in
//! `tests/render_defects.rs`, the C ABI in `ffi/tests/render_defects.rs`, the CLI in
//! `cli/tests/cli.rs`), so the three run the same cases and hold them to the same
//! expectations.
//!
//! Each expectation is the rendering rule (`render_judge`) plus a check in words of what the
//! defect broke (a header row shown above every part of a table, a line of code shown as
//! code, a link shown as a link, ...), read on the judge's rendering of each message alone.
#![allow(dead_code)]

use super::render_judge::{Allow, Style, Tok, check_messages, render};

/// Which part of the library a case runs through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    /// The engine: the reply in one delta, then `MessageEnd` and `Finish`; every send acked.
    Engine,
    /// The platform splitter, in chars.
    Splitter,
}

/// One reproduction.
#[derive(Clone, Debug)]
pub(crate) struct Defect {
    /// The defect's number in issue 16, and a letter when it has several cases.
    pub(crate) id: &'static str,
    /// What the user sees today, in a few words.
    pub(crate) today: &'static str,
    pub(crate) via: Via,
    /// The channel profile (engine) whose settings apply.
    pub(crate) channel: &'static str,
    /// A text limit instead of the profile's (engine), or the splitter's limit.
    pub(crate) limit: Option<usize>,
    pub(crate) max_lines: Option<usize>,
    pub(crate) prefix: Option<&'static str>,
    pub(crate) text: String,
    /// What the user must see, beyond the rendering rule.
    pub(crate) sees: fn(&[String]) -> Result<(), String>,
}

const TRAVEL_PLAN: &str = include_str!("../data/replies/travel-plan-7kb-table.md");
const SETUP_GUIDE: &str = include_str!("../data/replies/setup-guide-nested-fences.md");
const LINKS: &str = include_str!("../data/replies/rust-copy-links.md");
const REVIEW: &str = include_str!("../data/replies/review-long-bold-and-code.md");

const HEADER: &str = "| Item | Estimate (¥) | Notes |";

/// A few lines of prose (one paragraph, no blank line) then a small table right under it:
/// at the limit this makes, the last line break that fits is after the header row.
fn prose_then_table() -> (String, usize) {
    let intro = "Here is what the first week costs, item by item, before any discounts:\n\
                 the rail passes, the hotel nights and a daily food budget for two people,\n\
                 with the numbers rounded to the nearest hundred yen so they are easy to\n\
                 compare with what the booking sites show on the day you book:\n";
    let table = format!(
        "{HEADER}\n|---|--:|---|\n| Rail pass | 50,000 | 7 days |\n\
         | Hotel | 84,000 | 6 nights |\n| Food | 42,000 | ¥6,000 a day |\n\nThat is the week."
    );
    let limit = intro.chars().count() + HEADER.chars().count() + 6;
    (format!("{intro}{table}"), limit)
}

/// All the cases, in issue order.
pub(crate) fn defects() -> Vec<Defect> {
    let (prose_table, prose_table_limit) = prose_then_table();
    vec![
        Defect {
            id: "1a",
            today: "a table cut between its header and delimiter rows: both parts show raw pipes",
            via: Via::Splitter,
            channel: "generic",
            limit: Some(prose_table_limit),
            max_lines: None,
            prefix: None,
            text: prose_table,
            sees: header_above_every_table_part,
        },
        Defect {
            id: "1b",
            today: "a 7 KB table on Telegram: the continuation has no header and shows raw pipes",
            via: Via::Engine,
            channel: "telegram",
            limit: None,
            max_lines: None,
            prefix: None,
            text: TRAVEL_PLAN.to_owned(),
            sees: header_above_every_table_part,
        },
        Defect {
            id: "2",
            today: "a fence indented 4 spaces in a list item: a message starting there shows the \
                    fence lines as code and the rest as text",
            via: Via::Engine,
            channel: "generic",
            limit: Some(600),
            max_lines: None,
            prefix: None,
            text: SETUP_GUIDE.to_owned(),
            sees: |messages| {
                shown_as(messages, "thread 'main' panicked", "a code block", |s| {
                    s.code_block
                })?;
                shown_as(messages, "cargo test --workspace", "a code block", |s| {
                    s.code_block
                })
            },
        },
        Defect {
            id: "3",
            today: "a list item's long link split between its text and its URL: raw brackets",
            via: Via::Engine,
            channel: "discord",
            limit: Some(600),
            max_lines: None,
            prefix: None,
            text: LINKS.to_owned(),
            sees: |messages| {
                shown_as(messages, "Stop internally using", "a link", |s| {
                    s.link.as_deref().is_some_and(|u| u.contains("pull/48213"))
                })?;
                shown_as(messages, "otherwise bitwise copyable", "a link", |s| {
                    s.link.as_deref().is_some_and(|u| u.contains("pull/48213"))
                })
            },
        },
        Defect {
            id: "4",
            today: "a bold sentence longer than a message: literal ** in both messages",
            via: Via::Engine,
            channel: "generic",
            limit: Some(600),
            max_lines: None,
            prefix: None,
            text: REVIEW.to_owned(),
            sees: |messages| {
                shown_as(messages, "The retry loop", "bold", |s| s.bold)?;
                shown_as(messages, "bytes from the next part", "bold", |s| s.bold)
            },
        },
        Defect {
            id: "5",
            today: "an inline code span longer than the limit: a literal backtick and prose",
            via: Via::Engine,
            channel: "generic",
            limit: Some(60),
            max_lines: None,
            prefix: None,
            text: "To run only the integration tests, use `cargo test --package uploader \
                   --test integration --features s3-compat,localstack -- --test-threads=1` \
                   and wait for it."
                .to_owned(),
            sees: |messages| {
                shown_as(messages, "--package", "inline code", |s| s.inline_code)?;
                shown_as(messages, "--test-threads=1", "inline code", |s| {
                    s.inline_code
                })?;
                no_literal(messages, '`')
            },
        },
        Defect {
            id: "6a",
            today: "the prefix glued to a ``` fence: `[bot] ```python` renders as inline code",
            via: Via::Engine,
            channel: "generic",
            limit: None,
            max_lines: None,
            prefix: Some("[bot]"),
            text: "```python\nprint(1)\n```".to_owned(),
            sees: |messages| {
                prefix_on_its_own_line(messages, "[bot]")?;
                shown_as(messages, "print(1)", "a code block", |s| s.code_block)
            },
        },
        Defect {
            id: "6b",
            today: "the prefix glued to a ~~~ fence: its closing line opens a fence that never closes",
            via: Via::Engine,
            channel: "generic",
            limit: None,
            max_lines: None,
            prefix: Some("[bot]"),
            text: "~~~\nplain tilde fence\n~~~\n\nDone.".to_owned(),
            sees: |messages| {
                prefix_on_its_own_line(messages, "[bot]")?;
                shown_as(messages, "plain tilde fence", "a code block", |s| {
                    s.code_block
                })?;
                shown_as(messages, "Done.", "text", |s| !s.code_block)
            },
        },
        Defect {
            id: "7",
            today: "a fence opening line too long for the room: a message of fence lines only",
            via: Via::Engine,
            channel: "generic",
            limit: Some(30),
            max_lines: None,
            prefix: None,
            text: "Intro.\n\n```very-long-language-name\nfn main() {}\n```\n\nDone.".to_owned(),
            sees: |messages| {
                no_message_of_fence_lines_only(messages)?;
                shown_as(messages, "fn main() {}", "a code block", |s| s.code_block)
            },
        },
        Defect {
            id: "8a",
            today: "a line cap of 3 and an empty fence at the end: \"```\\n```\" sent alone",
            via: Via::Engine,
            channel: "discord",
            limit: None,
            max_lines: Some(3),
            prefix: None,
            text: "Example for:\n\n```\n```".to_owned(),
            sees: no_message_of_fence_lines_only,
        },
        Defect {
            id: "8b",
            today: "the splitter with a line cap of 3 cuts \"for:\" into \"for\" and \":\"",
            via: Via::Splitter,
            channel: "generic",
            limit: Some(2000),
            max_lines: Some(3),
            prefix: None,
            text: "for:\n\n```\n```".to_owned(),
            sees: |messages| {
                if !messages.iter().any(|m| m.contains("for:")) {
                    return Err(format!("\"for:\" is cut: {messages:?}"));
                }
                no_message_of_fence_lines_only(messages)
            },
        },
    ]
}

/// The case with this id.
pub(crate) fn defect(id: &str) -> Defect {
    defects()
        .into_iter()
        .find(|d| d.id == id)
        .unwrap_or_else(|| panic!("no defect {id}"))
}

/// The rendering rule and the case's own expectation, with the case named in the error.
pub(crate) fn check(d: &Defect, messages: &[String]) -> Result<(), String> {
    let allow = Allow {
        prefix: d.prefix.map(str::to_owned),
        ..Allow::default()
    };
    check_messages(&d.text, messages, &allow)
        .and_then(|()| (d.sees)(messages))
        .map_err(|e| {
            format!(
                "defect {} ({}):\n{e}\nmessages: {messages:#?}",
                d.id, d.today
            )
        })
}

/// Every message that shows the (whitespace-free) characters of `needle` shows them with a
/// style `ok` accepts; at least one message shows them.
fn shown_as(
    messages: &[String],
    needle: &str,
    what: &str,
    ok: fn(&Style) -> bool,
) -> Result<(), String> {
    let want: Vec<char> = needle.chars().filter(|c| !c.is_whitespace()).collect();
    let mut seen = false;
    for (i, m) in messages.iter().enumerate() {
        let chars: Vec<(char, Style)> = render(m)
            .into_iter()
            .filter_map(|t| match t {
                Tok::Char(c, s) if !c.is_whitespace() => Some((c, s)),
                _ => None,
            })
            .collect();
        for start in 0..chars.len() {
            let window = &chars[start..(start + want.len()).min(chars.len())];
            if window.len() == want.len() && window.iter().map(|(c, _)| *c).eq(want.iter().copied())
            {
                seen = true;
                if let Some((c, s)) = window.iter().find(|(_, s)| !ok(s)) {
                    return Err(format!(
                        "message {i} shows {needle:?} but its {c:?} is not {what} ({s:?}): {m:?}"
                    ));
                }
            }
        }
    }
    if seen {
        Ok(())
    } else {
        Err(format!("no message shows {needle:?} whole"))
    }
}

/// No message shows `c` as visible text (outside code).
fn no_literal(messages: &[String], c: char) -> Result<(), String> {
    for (i, m) in messages.iter().enumerate() {
        let literal = render(m)
            .into_iter()
            .any(|t| matches!(t, Tok::Char(x, s) if x == c && !s.inline_code && !s.code_block));
        if literal {
            return Err(format!("message {i} shows a literal {c:?}: {m:?}"));
        }
    }
    Ok(())
}

/// The first message starts with the prefix alone on its first line.
fn prefix_on_its_own_line(messages: &[String], prefix: &str) -> Result<(), String> {
    let first = messages.first().ok_or("no message")?;
    let line = first.split('\n').next().unwrap_or("");
    if line.trim_end() != prefix {
        return Err(format!(
            "the first message's first line is {line:?}, not the prefix {prefix:?} alone"
        ));
    }
    Ok(())
}

/// A table row: a line starting with `|` (after up to 3 spaces).
fn is_row(line: &str) -> bool {
    line.trim_start_matches(' ').starts_with('|')
}

/// A delimiter row: only pipes, dashes, colons and spaces, with a dash.
fn is_delimiter_row(line: &str) -> bool {
    is_row(line)
        && line.contains('-')
        && line
            .trim_end()
            .chars()
            .all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// Every message that shows rows of the table starts them with the header row and a
/// delimiter row (the table's own or repeated); no message starts with a delimiter row.
fn header_above_every_table_part(messages: &[String]) -> Result<(), String> {
    for (i, m) in messages.iter().enumerate() {
        let lines: Vec<&str> = m.lines().collect();
        if lines.first().is_some_and(|l| is_delimiter_row(l)) {
            return Err(format!("message {i} starts with a delimiter row: {m:?}"));
        }
        let Some(first_row) = lines.iter().position(|l| is_row(l)) else {
            continue;
        };
        if lines[first_row].trim_end() != HEADER
            || !lines
                .get(first_row + 1)
                .is_some_and(|l| is_delimiter_row(l))
        {
            return Err(format!(
                "message {i} shows table rows without the header row {HEADER:?} and a \
                 delimiter row above them; its first row: {:?}",
                lines[first_row]
            ));
        }
    }
    Ok(())
}

/// No message is made only of fence lines (and blank lines).
fn no_message_of_fence_lines_only(messages: &[String]) -> Result<(), String> {
    for (i, m) in messages.iter().enumerate() {
        let only_fences = m.lines().all(|l| {
            let t = l.trim();
            t.is_empty() || t.starts_with("```") || t.starts_with("~~~")
        });
        if only_fences {
            return Err(format!("message {i} is only fence lines: {m:?}"));
        }
    }
    Ok(())
}

/// One `#[test]` per numbered defect, in a module `numbered_defects` of the including test
/// file, each calling its `$holds(id)` (which runs the case through that file's face and
/// panics with the judge's account when the user would not see what the reply shows).
#[allow(unused_macros)]
macro_rules! numbered_defect_tests {
    ($holds:ident) => {
        mod numbered_defects {
            #[test]
            fn defect_1a_table_header_and_delimiter_stay_together() {
                super::$holds("1a");
            }

            #[test]
            fn defect_1b_every_part_of_a_long_table_has_its_header() {
                super::$holds("1b");
            }

            #[test]
            fn defect_2_a_fence_in_a_list_item_stays_code() {
                super::$holds("2");
            }

            #[test]
            fn defect_3_a_long_link_stays_a_link() {
                super::$holds("3");
            }

            #[test]
            fn defect_4_a_long_bold_sentence_stays_bold() {
                super::$holds("4");
            }

            #[test]
            fn defect_5_a_long_code_span_stays_code() {
                super::$holds("5");
            }

            #[test]
            fn defect_6a_prefix_before_a_backtick_fence() {
                super::$holds("6a");
            }

            #[test]
            fn defect_6b_prefix_before_a_tilde_fence() {
                super::$holds("6b");
            }

            #[test]
            fn defect_7_a_too_long_opening_line_is_reopened_bare() {
                super::$holds("7");
            }

            #[test]
            fn defect_8a_line_cap_never_sends_fence_lines_alone() {
                super::$holds("8a");
            }

            #[test]
            fn defect_8b_line_cap_does_not_cut_words() {
                super::$holds("8b");
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use numbered_defect_tests;
