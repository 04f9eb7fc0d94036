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
