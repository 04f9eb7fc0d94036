//! Tables cut across messages (SPEC §15, tables), through the public API: the platform
//! splitter, the block chunker (streamed in small deltas) and the engine. Every message is
//! rendered on its own by the independent judge (`common::render_judge`, pulldown-cmark) and
//! must show its stretch of the reply as the whole reply renders it.
//!
//! - A continuation repeats the header and delimiter rows wherever they fit in a piece with
//!   the row it starts with, however much of the piece the header takes.
//! - Where they do not fit, no piece can show that row as a table: the rows go on as their
//!   source text, cut between rows (the judge allows exactly that case, computed from its
//!   own reading of the reply).
//! - In the engine, a message has more room than a block: a block that goes on plainly and
//!   starts a message shows the header there again (with as many of its rows as fit).
//! - Tables inside list items and block quotes are tables too: the repeated header carries
//!   the quote's `>` or the item's indentation (never its list marker), and a piece that
//!   starts among the rows of a table nested 4 columns deep or more is de-indented so that
//!   the rows do not read as indented code.

mod common;

use common::render_judge::{Allow, Count, TableRoom, check_messages};
use common::*;
use replystream::{
    Block, ChunkerConfig, Config, Input, LengthMetric, PlatformSplitter, SplitConfig,
};

fn chunk(text: &str, max: usize, delta: usize) -> Vec<Block> {
    chunk_with(
        ChunkerConfig {
            min: max / 2,
            max,
            ..ChunkerConfig::default()
        },
        text,
        delta,
    )
}

fn split(text: &str, limit: usize) -> Vec<Block> {
    PlatformSplitter::new(SplitConfig {
        limit,
        ..SplitConfig::default()
    })
    .expect("valid config")
    .split(text)
}

fn texts(blocks: &[Block]) -> Vec<String> {
    blocks.iter().map(|b| b.text.clone()).collect()
}

/// The judge's allowance for pieces of `max` chars.
fn room(max: usize) -> Allow {
    Allow {
        table_room: Some(TableRoom {
            max,
            count: Count::Chars,
            max_lines: None,
        }),
        ..Allow::default()
    }
}

/// The engine on the generic channel posting Markdown at `limit`, `text` in deltas of
/// `delta` bytes: the messages the chat shows.
fn engine_messages(text: &str, limit: usize, delta: usize) -> Vec<String> {
    let mut c: Config = config("generic");
    c.text_limit = limit;
    c.format = replystream::Format::Markdown;
    let mut sim = Sim::new(engine(c));
    sim.stream(text, delta, 0)
        .push(Input::Finish)
        .run_until_idle();
    sim.sent_texts()
}

/// Every way of cutting `text` at `max` renders alike; at least one piece repeats the
/// header, and every repeated header starts with `head` (and is flagged and counted).
fn check_everywhere(text: &str, max: usize, head: &str) {
    let allow = room(max);
    let pieces = split(text, max);
    check_messages(text, &texts(&pieces), &allow)
        .unwrap_or_else(|e| panic!("splitter at {max}: {e}\npieces: {pieces:#?}"));
    for delta in [1, 7, 64, text.len()] {
        let blocks = chunk(text, max, delta);
        check_messages(text, &texts(&blocks), &allow)
            .unwrap_or_else(|e| panic!("chunker at {max}, deltas {delta}: {e}\n{blocks:#?}"));
        for blocks in [&pieces, &blocks] {
            assert!(
                blocks.iter().any(|b| b.table_header_repeated),
                "{blocks:#?}"
            );
            for b in blocks.iter() {
                assert!(LengthMetric::Chars.len(&b.text) <= max, "{b:?}");
                if b.table_header_repeated {
                    assert!(
                        b.text.starts_with(head),
                        "{:?} should start with {head:?}",
                        b.text
                    );
                    assert!(b.head_len >= head.len(), "{b:?}");
                }
            }
        }
        let messages = engine_messages(text, max, delta);
        assert!(messages.len() >= 2, "{messages:#?}");
        check_messages(text, &messages, &allow)
            .unwrap_or_else(|e| panic!("engine at {max}, deltas {delta}: {e}\n{messages:#?}"));
    }
}

/// `rows` rows of a price table, each line starting with `indent`.
fn rows(indent: &str, n: usize) -> String {
    (1..=n)
        .map(|i| format!("{indent}| Item {i} | {} € | note {i} |", i * 37))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_header_taking_most_of_a_piece_is_still_repeated() {
    // A header of 140 chars at a limit of 200: each continuation holds one row under it.
    let header = format!("| {} | Price | Notes |", "Item name ".repeat(12));
    let text = format!(
        "Prices:\n\n{header}\n|---|--:|---|\n{}\n\nDone.",
        rows("", 9)
    );
    check_everywhere(&text, 200, &format!("{header}\n|---|--:|---|\n"));
}

#[test]
fn rows_that_cannot_follow_the_header_go_on_whole_and_plainly() {
    // Header and delimiter rows of 184 chars: no row fits under them in 190.
    let header = format!("| {} | Price | Notes |", "Item name ".repeat(15));
    let text = format!(
        "Prices:\n\n{header}\n|---|--:|---|\n{}\n\nDone.",
        rows("", 6)
    );
    let max = 190;
    for pieces in [split(&text, max), chunk(&text, max, 7)] {
        let shown = texts(&pieces);
        assert!(pieces.iter().all(|b| !b.table_header_repeated));
        // Every row stands whole at the start of its piece.
        for i in 1..=6 {
            assert!(
                shown.iter().any(|p| p.starts_with(&format!("| Item {i} |"))
                    || p.contains(&format!("\n| Item {i} |"))),
                "{shown:#?}"
            );
        }
        check_messages(&text, &shown, &room(max)).unwrap();
        // The judge does see raw pipes where the room would have held the header.
        assert!(check_messages(&text, &shown, &room(1000)).is_err());
    }
}

#[test]
fn a_table_in_a_block_quote_repeats_its_header_with_the_quote_marker() {
    let text = format!(
        "Quoted from the plan:\n\n> | Item | Cost | Notes |\n> |---|--:|---|\n{}\n\nAfter the quote.",
        rows("> ", 24)
    );
    check_everywhere(&text, 200, "> | Item | Cost | Notes |\n> |---|--:|---|\n");
    // CRLF line ends too.
    let crlf = text.replace('\n', "\r\n");
    check_everywhere(
        &crlf,
        200,
        "> | Item | Cost | Notes |\r\n> |---|--:|---|\r\n",
    );
}

#[test]
fn a_table_in_a_list_item_repeats_its_header_indented() {
    let text = format!(
        "Steps:\n\n- Compare the prices:\n\n  | Item | Cost | Notes |\n  |---|--:|---|\n{}\n- Then book.",
        rows("  ", 24)
    );
    check_everywhere(&text, 200, "  | Item | Cost | Notes |\n  |---|--:|---|\n");
}

#[test]
fn a_table_on_a_list_items_first_line_repeats_without_the_marker() {
    // The header row is the item's first line: repeated, its `- ` would open a new item.
    let text = format!(
        "Steps:\n\n1. | Item | Cost | Notes |\n   |---|--:|---|\n{}\n2. Then book.",
        rows("   ", 24)
    );
    check_everywhere(&text, 200, "   | Item | Cost | Notes |\n   |---|--:|---|\n");
    let quoted = format!(
        "> - | Item | Cost | Notes |\n>   |---|--:|---|\n{}",
        rows(">   ", 24)
    );
    check_everywhere(
        &quoted,
        200,
        ">   | Item | Cost | Notes |\n>   |---|--:|---|\n",
    );
}

#[test]
fn a_table_nested_four_columns_deep_is_de_indented_at_a_message_start() {
    // Under `1. ` then `- `, the table stands at 5 columns: a piece starting among its rows
    // with that indentation would show them as indented code.
    let text = format!(
        "1. Pick a plan:\n   - Compare:\n\n     | Item | Cost | Notes |\n     |---|--:|---|\n{}\n2. Then book.",
        rows("     ", 24)
    );
    check_everywhere(&text, 200, "| Item | Cost | Notes |\n|---|--:|---|\n");
}

#[test]
fn container_tables_are_not_cut_while_a_cut_before_them_exists() {
    // The quote's table fits a piece; the paragraph before it and the table do not.
    let text = format!(
        "{}\n\n> | Item | Cost | Notes |\n> |---|--:|---|\n{}",
        "Words before the table. ".repeat(5),
        rows("> ", 4)
    );
    let table_at = text.find("> |").unwrap();
    let max = text.len() - table_at + 10;
    for pieces in [split(&text, max), chunk(&text, max, 3)] {
        let shown = texts(&pieces);
        assert!(
            shown.iter().any(|p| p.ends_with(&text[table_at..])),
            "the whole quoted table in one piece: {shown:#?}"
        );
        check_messages(&text, &shown, &room(max)).unwrap();
    }
}

#[test]
fn a_line_leaving_the_quote_ends_its_table() {
    // A lazy line is no row: the table ends before it (as the renderer reads it), and a
    // piece starting there shows it as text without a repeated header.
    let text = format!(
        "> | Item | Cost | Notes |\n> |---|--:|---|\n{}\n| lazy | line | here |\n{}",
        rows("> ", 6),
        "More words after the quote. ".repeat(6)
    );
    for max in [120, 200] {
        let pieces = split(&text, max);
        check_messages(&text, &texts(&pieces), &room(max))
            .unwrap_or_else(|e| panic!("{e}\n{pieces:#?}"));
        for b in &pieces {
            if b.table_header_repeated {
                assert!(b.text[b.head_len..].starts_with("> | Item"), "{b:?}");
            }
        }
    }
}

/// The engine on the generic channel posting Markdown: blocks of at most `chunk_max` chars
/// merged into messages of at most `limit`, `text` in deltas of `delta` bytes. The chat's
/// messages, after the exact invariants are checked on the sends (`common::reconstruct`:
/// each send is its stretch of the reply apart from flagged repairs at its edges).
fn engine_messages_within(text: &str, chunk_max: usize, limit: usize, delta: usize) -> Vec<String> {
    use common::reconstruct::{Rule, Source, check_answer, seen_sends};
    let mut c: Config = config("generic");
    c.text_limit = limit;
    c.chunk_min = chunk_max / 2;
    c.chunk_max = chunk_max;
    c.coalesce_idle_ms = 0;
    c.format = replystream::Format::Markdown;
    let mut sim = Sim::new(engine(c));
    sim.stream(text, delta, 0)
        .push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    assert!(sim.errors.is_empty() && sim.is_idle(), "{:?}", sim.errors);
    let rule = Rule {
        joiner: "\n\n",
        metric: LengthMetric::Chars,
        limit,
        max_lines: None,
        graphemes: true,
        all_fences_repairable: true,
    };
    let delivered: std::collections::HashSet<_> =
        sim.delivered.iter().map(|(_, s)| s.send_id).collect();
    let log: Vec<_> = sim.sends().into_iter().map(|(_, s)| s).collect();
    check_answer(
        &[Source::new(text, Vec::new())],
        &seen_sends(log.iter(), &delivered),
        &rule,
    )
    .unwrap_or_else(|e| panic!("exactness: {e}\n{:#?}", sim.sent_texts()));
    sim.sent_texts()
}

/// A table after `intro` whose lines start with `prefix`, and whose header and delimiter
/// rows take about 190 chars: no row fits under them in a block of 190, but a message of
/// 1000 holds them and many rows. With the header and delimiter rows as written.
fn wide_header_table(intro: &str, prefix: &str) -> (String, String) {
    let header = format!("{prefix}| {} | Price | Notes |", "Item name ".repeat(15));
    let head = format!("{header}\n{prefix}|---|--:|---|\n");
    let text = format!("{intro}{head}{}\n\nDone.", rows(prefix, 60));
    (text, head)
}

/// The messages of `text` (blocks of 190, messages of 1000): every message after the first
/// but the last starts among the rows and shows `head` first; the rendering rule holds
/// with the room of a message.
fn check_messages_repeat_head(text: &str, head: &str) {
    for delta in [1, 7, 64, text.len()] {
        let messages = engine_messages_within(text, 190, 1000, delta);
        assert!(messages.len() >= 3, "{messages:#?}");
        check_messages(text, &messages, &room(1000))
            .unwrap_or_else(|e| panic!("deltas {delta}: {e}\n{messages:#?}"));
        for m in &messages[1..messages.len() - 1] {
            assert!(m.starts_with(head), "{m:?} should start with {head:?}");
            assert!(m.chars().count() <= 1000);
        }
    }
}

#[test]
fn a_message_that_starts_among_rows_shows_the_header_where_the_message_has_room() {
    // Blocks of 190 go on plainly (the header and a row do not fit in one); the coalescer
    // merges them into messages of 1000, and each message after the first starts among
    // the rows: it carries the header and delimiter rows again, so it shows a table.
    let (text, head) = wide_header_table("Prices:\n\n", "");
    check_messages_repeat_head(&text, &head);
    check_messages_repeat_head(&text.replace('\n', "\r\n"), &head.replace('\n', "\r\n"));
}

#[test]
fn the_header_a_message_shows_again_carries_the_container_prefix() {
    // In a quote: the `>` kept.
    let (text, head) = wide_header_table("Quoted:\n\n", "> ");
    check_messages_repeat_head(&text, &head);
    // In a list item: indented as the item's lines are.
    let (text, head) = wide_header_table("Steps:\n\n- Compare the prices:\n\n", "  ");
    check_messages_repeat_head(&text, &head);
    // On the item's first line: its marker shown as spaces (it must not open an item).
    let (text, _) = wide_header_table("Steps:\n\n", "   ");
    let text = text.replacen("\n   | Item name", "\n1. | Item name", 1);
    let header = format!("   | {} | Price | Notes |", "Item name ".repeat(15));
    check_messages_repeat_head(&text, &format!("{header}\n   |---|--:|---|\n"));
    // Two list levels deep (5 columns): the message is de-indented, the header too.
    let (text, _) = wide_header_table("1. Pick a plan:\n   - Compare:\n\n", "     ");
    let header = format!("| {} | Price | Notes |", "Item name ".repeat(15));
    check_messages_repeat_head(&text, &format!("{header}\n|---|--:|---|\n"));
}

#[test]
fn blocks_merged_into_a_message_that_shows_the_table_drop_their_repeated_header() {
    // Blocks of 190 each repeat the short header; merged into messages of 1000, a block
    // joining a message that already shows the table leaves its repeat out: the header
    // shows once per message, at the top of the message's part of the table.
    let head = "| Item | Cost | Notes |\n|---|--:|---|\n";
    let text = format!("Prices:\n\n{head}{}\n\nDone.", rows("", 100));
    let blocks = chunk(&text, 190, 7);
    assert!(
        blocks.iter().filter(|b| b.table_header_repeated).count() >= 5,
        "{blocks:#?}"
    );
    for delta in [1, 7, 64, text.len()] {
        let messages = engine_messages_within(&text, 190, 1000, delta);
        assert!(messages.len() >= 3, "{messages:#?}");
        check_messages(&text, &messages, &room(1000))
            .unwrap_or_else(|e| panic!("deltas {delta}: {e}\n{messages:#?}"));
        for (i, m) in messages.iter().enumerate() {
            assert_eq!(m.matches("|---|--:|---|").count(), 1, "{m:?}");
            if i > 0 && i + 1 < messages.len() {
                assert!(m.starts_with(head), "{m:?}");
            }
        }
    }
}

#[test]
fn a_message_with_room_for_the_header_and_only_some_rows_of_a_block_shows_those() {
    // Header and delimiter rows of about 900 chars: a message of 1000 holds them with two
    // or three rows, not with a whole block of 190. Such a message shows the header and
    // the rows that fit; the rest of the block starts the next message, under the header
    // again. Every message stays within the limit and renders as a table.
    let header = format!("| {} | Price | Notes |", "Item name ".repeat(88));
    let head = format!("{header}\n|---|--:|---|\n");
    let text = format!("Prices:\n\n{head}{}\n\nDone.", rows("", 30));
    for delta in [1, 7, 64, text.len()] {
        let messages = engine_messages_within(&text, 190, 1000, delta);
        assert!(messages.len() >= 10, "{messages:#?}");
        check_messages(&text, &messages, &room(1000))
            .unwrap_or_else(|e| panic!("deltas {delta}: {e}\n{messages:#?}"));
        for m in &messages {
            assert!(m.chars().count() <= 1000, "{m:?}");
        }
        for m in &messages[1..messages.len() - 1] {
            assert!(m.starts_with(&head), "{m:?}");
        }
    }
}

/// A piece that starts with the end of an item's fence (its blank code lines and closing
/// line) before a table, under a line cap that leaves room for the header and delimiter
/// rows but not a body row: the cut falls right after the delimiter row, and the next piece
/// repeats them, so its rows show as a table (a plain cut there showed them as raw pipes).
#[test]
fn a_cut_right_after_the_delimiter_row_repeats_the_header() {
    let text = "2) café テスト naïve it ~~struck out~~。\n    ```\n    let first = 541;\n\n    \
                cargo build --release\n    let s = \"`\";\n\n\n    ```\n\n| Col 0 | Col 1 |\n\
                |:-:|--:|\n| it call the | テスト it |\n| you token | a — twice |\n\
                | token (optional) file | config café étude |\n";
    let pieces = PlatformSplitter::new(SplitConfig {
        limit: 300,
        metric: LengthMetric::Chars,
        max_lines: Some(5),
        ..SplitConfig::default()
    })
    .expect("valid config")
    .split(text);
    let texts = texts(&pieces);
    let at = texts
        .iter()
        .position(|t| t.ends_with("| Col 0 | Col 1 |\n|:-:|--:|"))
        .expect("a piece ends with the delimiter row");
    assert!(pieces[at + 1].table_header_repeated, "{pieces:#?}");
    assert!(
        texts[at + 1].starts_with("| Col 0 | Col 1 |\n|:-:|--:|\n| it call the |"),
        "{texts:#?}"
    );
    check_messages(text, &texts, &Allow::default()).unwrap_or_else(|e| panic!("{e}\n{texts:#?}"));
    blocks_hold(text, &pieces, "limit 300, 5 lines");
}
