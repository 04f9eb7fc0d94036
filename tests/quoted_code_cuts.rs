//! Code in a block quote cut where a message starts inside it (SPEC §15, containers;
//! issue 16).
//!
//! - An indented code line in a quote cut in its middle goes on after the quote's `>` and
//!   the 4 spaces (`indent_reopened`), so the rest of the line is still code in the quote.
//!   Before, it went on after 4 spaces alone: that line left the quote. Found by
//!   `render_props` (`engine_keeps_the_exact_invariants_with_fences_in_containers`,
//!   `PROPS_CASES=200`, `PROPS_SEED=6` and `7`, a text limit of 30).
//!
//! - A piece that starts inside a fence of a list item in a quote whose lines sit 4 columns
//!   past the `>` is de-indented after the `>` (`Block::dedent_quotes`). Before, it showed
//!   the quote's indented code, the fence lines as code text. Found by `render_props`
//!   (`splitter_pieces_render_as_the_reply`, `PROPS_CASES=128`, the default seed and
//!   `PROPS_SEED=10`; kept as `a_piece_inside_a_quoted_items_deep_fence_shows_the_code`).
//!
//! Through the public API: the chunker (whole text and 1-byte deltas), the engine on a
//! simulated chat, the platform splitter. Judged by the exact rebuild and the rendering judge
//! (pulldown-cmark), never by the library's scanner.

mod common;

use common::render_judge::{Allow, check_messages};
use replystream::{Block, Config, LengthMetric, PlatformSplitter, SplitConfig, SplitMode};

/// The chunker's blocks of `text` at `max` chars, fed whole and byte by byte (the same).
fn chunked(text: &str, max: usize) -> Vec<Block> {
    common::chunked_both_ways(text, max)
}

/// The splitter's pieces of `text` at `limit` chars (length mode, line cap `cap`).
fn split(text: &str, limit: usize, cap: Option<usize>) -> Vec<Block> {
    let config = SplitConfig {
        limit,
        metric: LengthMetric::Chars,
        mode: SplitMode::Length,
        max_lines: cap,
        ..SplitConfig::default()
    };
    PlatformSplitter::new(config).unwrap().split(text)
}

/// The answer messages the chat shows for `text` in `delta`-byte deltas, with a text limit
/// of `limit` (Markdown posted as written).
fn engine_messages(text: &str, limit: usize, delta: usize) -> Vec<String> {
    let mut config: Config = common::config("telegram");
    config.text_limit = limit;
    config.format = replystream::Format::Markdown;
    common::answer_messages(config, text, delta)
}

fn texts(blocks: &[Block]) -> Vec<&str> {
    blocks.iter().map(|b| b.text.as_str()).collect()
}

/// A quote whose indented code line is longer than a block: the block cut in its middle
/// ends the line's first part, and the next starts with the quote's `>`, its space and the
/// 4 spaces (synthetic, flagged, counted in `head_len`), then the rest of the line.
const QUOTED_CODE: &str = "> Intro:\n>\n>     indented(body); let first = 917;\n> after";

/// The same two levels deep: a quote in a list item in a quote (`>   > `).
const NESTED_QUOTED_CODE: &str =
    "> - item:\n>   > quoted:\n>\n>   >     indented(body); let s = 1;\n>   > after";

#[test]
fn an_indented_code_line_cut_in_a_quote_goes_on_in_the_quote() {
    let blocks = chunked(QUOTED_CODE, 30);
    assert_eq!(
        texts(&blocks),
        [
            "> Intro:\n>",
            ">     indented(body); let firs",
            ">     t = 917;",
            "> after",
        ]
    );
    let b = &blocks[2];
    assert!(b.indent_reopened, "{b:#?}");
    assert_eq!(
        (b.head_len, &QUOTED_CODE[b.source.clone()]),
        (6, "t = 917;")
    );
    common::blocks_hold(QUOTED_CODE, &blocks, "chunker, max 30");

    let pieces = split(QUOTED_CODE, 30, None);
    assert_eq!(
        texts(&pieces),
        [
            "> Intro:\n>",
            ">     indented(body); let firs",
            ">     t = 917;\n> after",
        ]
    );
    assert!(pieces[2].indent_reopened && pieces[2].head_len == 6);
    common::blocks_hold(QUOTED_CODE, &pieces, "splitter, limit 30");

    for delta in [1, 7, QUOTED_CODE.len()] {
        let messages = engine_messages(QUOTED_CODE, 30, delta);
        assert_eq!(
            messages,
            [
                "> Intro:\n>",
                ">     indented(body); let firs",
                ">     t = 917;\n> after",
            ],
            "deltas of {delta}"
        );
        if let Err(e) = check_messages(QUOTED_CODE, &messages, &Allow::default()) {
            panic!("deltas of {delta}: {e}\n{messages:#?}");
        }
    }
}

#[test]
fn an_indented_code_line_cut_in_a_quote_in_items_in_a_quote_keeps_both_quotes() {
    let blocks = chunked(NESTED_QUOTED_CODE, 30);
    assert_eq!(
        texts(&blocks),
        [
            "> - item:",
            ">   > quoted:\n>",
            ">   >     indented(body); let ",
            ">   >     s = 1;",
            ">   > after",
        ]
    );
    // The item's marker shows as spaces: no second item opens.
    assert_eq!(blocks[3].head_len, ">   >     ".len());
    common::blocks_hold(NESTED_QUOTED_CODE, &blocks, "chunker, max 30");
    common::blocks_hold(
        NESTED_QUOTED_CODE,
        &split(NESTED_QUOTED_CODE, 30, None),
        "splitter, limit 30",
    );
    for delta in [1, 7, NESTED_QUOTED_CODE.len()] {
        let messages = engine_messages(NESTED_QUOTED_CODE, 30, delta);
        assert_eq!(
            messages,
            [
                "> - item:\n>   > quoted:\n>",
                ">   >     indented(body); let",
                ">   >     s = 1;\n>   > after",
            ],
            "deltas of {delta}"
        );
        if let Err(e) = check_messages(NESTED_QUOTED_CODE, &messages, &Allow::default()) {
            panic!("deltas of {delta}: {e}\n{messages:#?}");
        }
    }
}

/// A list item in a quote whose fence sits 4 columns past the `>` (1 space into the item's
/// content under `> 1) `): read alone, without the item, those lines are the quote's
/// indented code. A piece that starts inside the fence (or at its opening line) is shown as
/// the item's content reads in the quote: the item's 3 columns taken off after each line's
/// `> ` (`dedent` 3 after `dedent_quotes` 1), its reopening and closing lines too.
const QUOTED_ITEM_FENCE: &str = "> 1) Run:\n>     ```\n>     let first = 65;\n>     cargo build \
                                 --release\n>\n>     print(1)\n>     ```\n>\n> 2) Ship it.";

#[test]
fn a_piece_inside_a_quoted_items_deep_fence_is_de_indented_after_the_quote_marker() {
    // A 5-line cap: the fence cannot go whole with its item.
    let pieces = split(QUOTED_ITEM_FENCE, 300, Some(5));
    assert_eq!(
        texts(&pieces),
        [
            "> 1) Run:\n>     ```\n>     let first = 65;\n>     ```",
            ">  ```\n>  cargo build --release\n>\n>  print(1)\n>  ```",
            ">\n> 2) Ship it.",
        ]
    );
    let b = &pieces[1];
    assert_eq!((b.dedent, b.dedent_quotes), (3, 1), "{b:#?}");
    assert!(b.fence_reopened && b.head_len == ">  ```\n".len());
    assert_eq!(
        &QUOTED_ITEM_FENCE[b.source.clone()],
        ">     cargo build --release\n>\n>     print(1)\n>     ```"
    );
    common::blocks_hold(QUOTED_ITEM_FENCE, &pieces, "splitter, limit 300, 5 lines");
    let shown: Vec<String> = pieces.iter().map(|b| b.text.clone()).collect();
    if let Err(e) = check_messages(QUOTED_ITEM_FENCE, &shown, &Allow::default()) {
        panic!("{e}\n{shown:#?}");
    }
}

#[test]
fn blocks_and_messages_inside_a_quoted_items_deep_fence_show_it_as_code() {
    let blocks = chunked(QUOTED_ITEM_FENCE, 40);
    assert_eq!(
        texts(&blocks),
        [
            "> 1) Run:\n>     ```\n>     let \n>     ```",
            // The quoted prefix after the reopening line goes on in the middle of the
            // code line: `>` and its space, then the rest (the item's columns off).
            ">  ```\n> first = 65;\n>  ```",
            ">  ```\n>  cargo build --\n>  ```",
            ">  ```\n> release\n>\n>  ```",
            ">  ```\n>  print(1)\n>  ```\n>",
            "> 2) Ship it.",
        ]
    );
    assert!(
        blocks[1..5]
            .iter()
            .all(|b| (b.dedent, b.dedent_quotes) == (3, 1))
    );
    common::blocks_hold(QUOTED_ITEM_FENCE, &blocks, "chunker, max 40");
    for delta in [1, 7, QUOTED_ITEM_FENCE.len()] {
        let messages = engine_messages(QUOTED_ITEM_FENCE, 40, delta);
        assert_eq!(messages, texts(&blocks), "deltas of {delta}");
        if let Err(e) = check_messages(QUOTED_ITEM_FENCE, &messages, &Allow::default()) {
            panic!("deltas of {delta}: {e}\n{messages:#?}");
        }
    }
}

/// A text (a block the engine splits over a line cap) that ends with a line carrying only
/// the outer quote (`>`) after a fence in a quote in a list item in a quote: that line
/// leaves the inner quote, which ends the fence, as it does when more text follows.
/// Before, the end of the text left the line undecided and the fence open: the last piece
/// ended with a synthetic `>   > ```` after the `>`, which renders as a new, empty code
/// block. Found by `render_props` (`engine_messages_render_as_the_reply`,
/// `PROPS_SEED=32 PROPS_CASES=400`: Discord, its 17-line cap).
#[test]
fn a_text_ending_with_the_outer_quotes_marker_ends_the_inner_quotes_fence() {
    const TEXT: &str = "> * item:\n>   > ```bash\n>   > a = 1\n>   > b = 2\n>   > c = 3\n>";
    let whole = split(TEXT, 300, None);
    assert_eq!(texts(&whole), [TEXT]);
    assert!(
        !whole[0].fence_closed && whole[0].tail_len == 0,
        "{whole:#?}"
    );
    common::blocks_hold(TEXT, &whole, "splitter, no cap");

    let capped = split(TEXT, 300, Some(4));
    assert_eq!(
        texts(&capped),
        [
            "> * item:",
            ">   > ```bash\n>   > a = 1\n>   > ```",
            ">   > ```bash\n>   > b = 2\n>   > c = 3\n>",
        ]
    );
    let last = &capped[2];
    assert!(last.fence_reopened && !last.fence_closed && last.tail_len == 0);
    assert_eq!(&TEXT[last.source.clone()], ">   > b = 2\n>   > c = 3\n>");
    common::blocks_hold(TEXT, &capped, "splitter, cap 4");

    // The same text with a line after it: the `>` line ended the fence there too.
    let more = format!("{TEXT}\n>   > print(1)");
    let pieces = split(&more, 300, None);
    assert_eq!(texts(&pieces), [more.as_str()]);
    assert!(!pieces[0].fence_closed);
}

/// A reply in an item (`* `) whose nested item (`  2. `) holds a quote, over Discord's
/// 17-line cap: the engine splits the block by its source, and the piece that starts at
/// the quote's line `     > x` (after a blank line) carries the outer item's 2 columns in
/// force there: `     > ~~~` shows as `   > ~~~` (still the quote's fence opener), the first
/// line's indentation trimmed by the send. The whole checks (exact rebuild, rendering) are
/// in `tests/render_props.rs`
/// (`a_line_cap_piece_of_a_de_indented_block_keeps_the_columns_in_force`, found with
/// `PROPS_SEED=56`).
#[test]
fn a_line_cap_piece_in_a_nested_items_quote_keeps_the_columns_in_force() {
    let words = vec!["word"; 170].join(" ");
    let code: String = (0..6).map(|k| format!("      let v{k} = {k};\n")).collect();
    let text = format!(
        "* {words}.\n  1. b:\n      ~~~json\n{code}      ~~~\n\n  2. c\n     > q:\n     > ~~~python\n     > let first = 920;\n\n     >     indented(body);\n\n     > x = [1, 2, 3]\n     > ~~~\n\n* next.\n"
    );
    for delta in [1, 7, text.len()] {
        let messages = common::answer_messages(common::config("discord"), &text, delta);
        assert_eq!(
            messages,
            [
                text[..text.find("\n\n     > x").unwrap()].to_owned(),
                "> x = [1, 2, 3]\n   > ~~~\n\n* next.".to_owned(),
            ],
            "deltas of {delta}"
        );
    }
}
