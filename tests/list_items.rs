//! A list item after a cut inside the item before it (issue 16, list markers): CommonMark
//! lets a list item interrupt a paragraph only when it may start a list there (a bullet, or
//! an ordered item numbered 1, with text). In the reply `3. Port forwarding` goes on with
//! the list of item 2; a message that starts inside item 2 shows item 2's text as a
//! paragraph of its own, and `3.` right after it would read as that paragraph's text. So a
//! piece that starts inside an item ends before such a later item of its list, through the
//! splitter, the chunker and the engine (whose coalescer starts a message there too).
//!
//! Judged by the test's own renderer (pulldown-cmark, `common::render_judge`) and by exact
//! expected texts; the text-core invariants by `text_checks`.

mod common;
mod text_checks;

use common::render_judge::{Allow, check_messages};
use replystream::sim::Sim;
use replystream::{
    Block, BreakPreference, ChannelProfile, ChunkMode, ChunkerConfig, Config, Engine, Input, Lane,
    LengthMetric, PlatformSplitter, SplitConfig, SplitMode,
};
use text_checks::{Expect, PREFS, check_all, check_blocks, run_chunker};

/// A guide whose item 2 goes on with a lazy line before item 3.
const GUIDE: &str = "Three ways to reach it:\n\n\
1. **Mesh VPN:** install the app on both ends.\n\
2. **Tunnel service:** the provider relays the traffic.\n\
No ports opened on your router, but the provider sees the traffic.\n\
3. **Port forwarding:** the classic way, and the most exposed.\n";

fn texts(blocks: &[Block]) -> Vec<&str> {
    blocks.iter().map(|b| b.text.as_str()).collect()
}

fn owned(blocks: &[Block]) -> Vec<String> {
    blocks.iter().map(|b| b.text.clone()).collect()
}

fn split(text: &str, limit: usize, mode: SplitMode, max_lines: Option<usize>) -> Vec<Block> {
    let config = SplitConfig {
        limit,
        mode,
        max_lines,
        ..SplitConfig::default()
    };
    let pieces = PlatformSplitter::new(config).expect("valid").split(text);
    let expect = Expect::for_text(text, config.metric, config.limit, max_lines);
    check_blocks(text, &pieces, expect).expect("invariants");
    pieces
}

fn judge(text: &str, messages: &[String]) {
    if let Err(e) = check_messages(text, messages, &Allow::default()) {
        panic!("{e}\nmessages: {messages:#?}");
    }
}

#[test]
fn the_splitter_ends_a_piece_before_the_item_its_text_would_swallow() {
    // 140 chars: items 1 and 2's first line fill a piece; the next piece starts in item 2's
    // lazy line, and ends before item 3 although item 3 would fit beside it (together they
    // would show `3.` as text).
    let pieces = split(GUIDE, 140, SplitMode::Length, None);
    assert_eq!(
        texts(&pieces),
        [
            "Three ways to reach it:",
            "1. **Mesh VPN:** install the app on both ends.\n2. **Tunnel service:** the provider relays the traffic.",
            "No ports opened on your router, but the provider sees the traffic.",
            "3. **Port forwarding:** the classic way, and the most exposed.",
        ]
    );
    judge(GUIDE, &owned(&pieces));
}

#[test]
fn every_limit_mode_and_line_cap_renders_the_items_as_items() {
    for text in [GUIDE.to_owned(), GUIDE.replace('\n', "\r\n")] {
        for limit in (40..=200).step_by(7) {
            for mode in [SplitMode::Length, SplitMode::Newline] {
                for cap in [None, Some(3), Some(5)] {
                    let pieces = split(&text, limit, mode, cap);
                    judge(&text, &owned(&pieces));
                }
            }
        }
    }
}

/// Hard shapes: `1)` markers, 2-digit numbers, a nested list before the next outer item, a
/// quote around the list, an empty item, mixed marker kinds (CRLF variants are made below).
fn hard_lists() -> Vec<String> {
    vec![
        "Intro line.\n\n1) first item, with words enough to be cut somewhere.\n\
         2) second item, long enough that a piece starts inside it.\n   \
         its lazy continuation is here.\n3) third item after the continuation.\n"
            .to_owned(),
        "Nine done:\n\n9. ninth step, with a few words more than fit one piece.\n\
         continued text of the ninth step, lazily.\n10. tenth step: two digits now.\n\
         11. eleventh step, the last one.\n"
            .to_owned(),
        "Steps:\n\n1. outer one has a nested list:\n   - wet your hand;\n   \
         - grab the far side of the dough and fold it over;\n   - turn the bowl.\n\n   \
         **Ready when it jiggles.** Don't go by the clock alone.\n2. shape the dough.\n\
         3. bake it at 250 degrees.\n"
            .to_owned(),
        "> Quoted steps:\n>\n> 1. first quoted step with text enough for a cut.\n\
         > 2. second quoted step, also long enough for a cut.\n\
         >    more of the second quoted step.\n> 3. third quoted step.\n"
            .to_owned(),
        "- a bullet with text that goes on a while here.\n  and a lazy line of it.\n-\n  \
         the empty item's text on the next line.\n- last bullet.\n"
            .to_owned(),
        "Mixed markers:\n\n1) first item, with text enough for a cut here.\n   \
         more of the first item.\n1. a list of another kind starts.\n\
         2) and a third list after its text.\n"
            .to_owned(),
    ]
}

#[test]
fn hard_lists_render_as_the_reply_through_the_splitter() {
    for base in hard_lists() {
        for text in [base.clone(), base.replace('\n', "\r\n")] {
            for limit in (24..=160).step_by(3) {
                for mode in [SplitMode::Length, SplitMode::Newline] {
                    let pieces = split(&text, limit, mode, None);
                    judge(&text, &owned(&pieces));
                }
            }
        }
    }
}

fn chunker(min: usize, max: usize, break_preference: BreakPreference) -> ChunkerConfig {
    ChunkerConfig {
        min,
        max,
        break_preference,
        flush_on_paragraph: false,
        metric: LengthMetric::Chars,
    }
}

#[test]
fn the_chunker_ends_a_block_before_the_item_its_text_would_swallow() {
    // The block after item 2's first line starts in its lazy line and ends before item 3,
    // below `min` (100): a short block that renders right beats one that does not.
    let blocks = run_chunker(chunker(100, 140, BreakPreference::Paragraph), [GUIDE]);
    assert_eq!(
        texts(&blocks),
        [
            "Three ways to reach it:\n\n1. **Mesh VPN:** install the app on both ends.\n2. **Tunnel service:** the provider relays the traffic.",
            "No ports opened on your router, but the provider sees the traffic.",
            "3. **Port forwarding:** the classic way, and the most exposed.",
        ]
    );
    // The separators are the source's: the text rebuilds exactly.
    let rebuilt: String = blocks
        .iter()
        .map(|b| format!("{}{}{}", b.lead, &GUIDE[b.source.clone()], b.sep))
        .collect();
    assert_eq!(rebuilt, GUIDE);
}

#[test]
fn chunker_blocks_render_as_the_reply_for_every_preference_and_delta_size() {
    let mut texts = hard_lists();
    texts.push(GUIDE.to_owned());
    for base in texts {
        for text in [base.clone(), base.replace('\n', "\r\n")] {
            for pref in PREFS {
                for (min, max) in [(1, 24), (10, 40), (30, 60), (60, 130)] {
                    let config = chunker(min, max, pref);
                    check_all(&text, config, &[1, 5, 64]).expect("invariants");
                    let blocks = run_chunker(config, [text.as_str()]);
                    judge(&text, &owned(&blocks));
                }
            }
        }
    }
}

/// The engine on a generic channel, blocks of at most `max` chars, every block its own
/// candidate for a message; the reply streamed in deltas of `size` bytes.
fn engine_messages(text: &str, max: usize, size: usize) -> Vec<String> {
    engine_messages_within(text, max, max, size)
}

#[test]
fn engine_messages_start_at_the_item_not_before_it() {
    let shown = engine_messages(GUIDE, 120, 7);
    // However the coalescer merges blocks, the item line never follows text that does
    // not show its list.
    judge(GUIDE, &shown);
    assert!(
        shown
            .iter()
            .any(|m| m.starts_with("3. **Port forwarding:**")),
        "{shown:#?}"
    );
    for base in hard_lists() {
        for text in [base.clone(), base.replace('\n', "\r\n")] {
            for max in [40, 70, 130] {
                for size in [1, 9, 1000] {
                    judge(&text, &engine_messages(&text, max, size));
                }
            }
        }
    }
}

/// A reply that opens `**` and never closes it; `2*3*4` after it pairs its own stars.
const NEVER_CLOSED: &str = "The **estimate holds for small loads, where 2*3*4 requests a \
second stay well under the limit and nothing queues up behind the slow ones at all.";

#[test]
fn a_run_the_reply_never_closes_stays_literal_in_split_pieces() {
    // The splitter sees the whole text: no piece closes the run (CommonMark's rule of 3:
    // the `*` of `2*3` cannot close `**`).
    for limit in [30, 50, 80] {
        let pieces = split(NEVER_CLOSED, limit, SplitMode::Length, None);
        assert!(
            pieces.iter().all(|p| !p.spans_closed && !p.spans_reopened),
            "{pieces:#?}"
        );
        judge(NEVER_CLOSED, &owned(&pieces));
    }
}

#[test]
fn a_streamed_cut_closes_a_run_whose_closer_could_still_come() {
    // Streamed, the cut comes before the reply shows that `**` is never closed: the first
    // block closes it (the closer could still come), the next reopens it. The judge allows
    // exactly that for streamed messages, and nothing else.
    let config = chunker(1, 50, BreakPreference::Paragraph);
    let deltas = text_checks::deltas(NEVER_CLOSED, &[20]);
    let blocks = run_chunker(config, &deltas);
    assert!(blocks[0].spans_closed, "{blocks:#?}");
    assert!(blocks[0].text.ends_with("**"), "{blocks:#?}");
    assert!(blocks[1].spans_reopened && blocks[1].text.starts_with("**"));
    let shown = owned(&blocks);
    let streamed = Allow {
        streamed: true,
        ..Allow::default()
    };
    check_messages(NEVER_CLOSED, &shown, &streamed).expect("allowed for a stream");
    assert!(check_messages(NEVER_CLOSED, &shown, &Allow::default()).is_err());
    // A closed run is not excused: the judge still sees bold dropped.
    let closed = "The **estimate** holds.";
    let wrong = vec!["The **estimate".to_owned(), "holds.".to_owned()];
    assert!(check_messages(closed, &wrong, &streamed).is_err());
}

#[test]
fn a_final_that_resends_text_from_inside_an_item_starts_a_message_at_the_next_item() {
    use replystream::sim::Ack;
    let mut c = Config::for_channel(&ChannelProfile::by_name("generic").expect("generic"));
    c.chunk_mode = ChunkMode::Length;
    c.chunk_min = 100;
    c.chunk_max = 140;
    c.block_streaming = true;
    c.coalesce_idle_ms = 0;
    c.coalesce_min = Some(1);
    c.coalesce_max = Some(140);
    // The sends after the first fail for good: their text goes out again in the finals,
    // from item 2's lazy line on.
    let policy = Box::new(|_: &replystream::SendRequest, n: usize| match n {
        0 => Ack::Deliver { after_ms: 10 },
        _ if n < 3 => Ack::Fail {
            after_ms: 10,
            retry_after_ms: None,
            permanent: true,
        },
        _ => Ack::Deliver { after_ms: 10 },
    });
    let mut sim = Sim::with_policy(Engine::new(c, 7).expect("valid"), policy);
    sim.push(Input::TextDelta(GUIDE))
        .push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    let shown: Vec<String> = sim
        .chat
        .lane_texts(Lane::Answer)
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        shown,
        [
            "Three ways to reach it:\n\n1. **Mesh VPN:** install the app on both ends.\n2. **Tunnel service:** the provider relays the traffic.",
            "No ports opened on your router, but the provider sees the traffic.",
            "3. **Port forwarding:** the classic way, and the most exposed.",
        ]
    );
    judge(GUIDE, &shown);
}

/// A long numbered guide whose every item goes on with a lazy line: a preview's tail
/// window, snapped to a line start, often starts at one of them.
fn long_guide() -> String {
    let mut text = String::from("The whole procedure:\n\n");
    for n in 2..120 {
        text.push_str(&format!(
            "{n}. **Step {n}:** do the thing that step {n} asks for.\n\
             Its lazy line says a little more about step {n}.\n"
        ));
    }
    text
}

#[test]
fn a_preview_window_never_starts_in_an_item_before_the_next_item() {
    use common::render_judge::{PreviewRule, check_preview, render};
    use replystream::{PreviewMode, SendKind, SendOp};
    let text = long_guide();
    let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
    config.preview = PreviewMode::Partial;
    let cursor = config.preview_cursor.clone();
    let mut sim = Sim::new(Engine::new(config, 7).expect("valid config"));
    sim.push(Input::MessageStart);
    for delta in text_checks::deltas(&text, &[64]) {
        sim.push(Input::TextDelta(delta));
        sim.wait(150);
    }
    sim.push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    let reply = render(&text);
    let mut previews = 0;
    for (t, s) in sim.sends() {
        if s.kind != SendKind::Preview || matches!(s.op, SendOp::Delete { .. }) {
            continue;
        }
        previews += 1;
        let shown = &s.payload.text;
        check_preview(
            &reply,
            shown,
            cursor.as_deref(),
            &Allow::default(),
            PreviewRule::Healed,
        )
        .unwrap_or_else(|e| panic!("preview at {t} ms: {e}\n{shown:?}"));
    }
    assert!(previews > 10, "{previews} previews");
}

/// Item 10 holds a fence 4 columns deep whose code lines look like the start of an ordered
/// list; item 10's paragraph follows it, then item 11, which cannot interrupt that paragraph.
/// A message that starts inside the fence shows it de-indented (`Block::dedent`): its code
/// lines `1. listen …` then stand at column 0, where item 11's marker stands.
const CODE_LOOKALIKE: &str = "Set up the service:\n\n\
9. Install the package with the system's package manager first, then check that its version is recent.\n\
10. Write the config file; its numbered steps look like this:\n\n    \
```text\n    \
1. listen on port 8080\n    \
2. log to stderr\n    \
```\n\n    \
Keep the file next to the binary, where the service looks for it at start.\n\
11. Start the service and watch its log for errors.\n";

/// The engine on a generic channel cutting blocks of at most `chunk_max` chars and merging
/// them into messages of at most `limit` (every block a candidate for merging), the reply
/// in deltas of `size` bytes.
fn engine_messages_within(text: &str, chunk_max: usize, limit: usize, size: usize) -> Vec<String> {
    let mut c = Config::for_channel(&ChannelProfile::by_name("generic").expect("generic"));
    c.chunk_mode = ChunkMode::Length;
    c.chunk_min = chunk_max / 3;
    c.chunk_max = chunk_max;
    c.text_limit = limit;
    c.block_streaming = true;
    c.coalesce_idle_ms = 0;
    c.coalesce_min = Some(1);
    c.coalesce_max = Some(limit);
    let mut sim = Sim::new(Engine::new(c, 7).expect("valid"));
    for delta in text_checks::deltas(text, &[size]) {
        sim.push(Input::TextDelta(delta));
    }
    sim.push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    sim.chat
        .lane_texts(Lane::Answer)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_code_line_that_looks_like_an_item_does_not_open_the_list_for_the_coalescer() {
    // Blocks of 60 chars, messages of 200: the message that starts in item 10's fence has
    // room for item 11, but its `1. listen` line is code, not an item of a list: item 11
    // starts a message of its own.
    let shown = engine_messages_within(CODE_LOOKALIKE, 60, 200, 7);
    judge(CODE_LOOKALIKE, &shown);
    assert!(
        shown.iter().any(|m| m.starts_with("11. Start the service")),
        "{shown:#?}"
    );
    for text in [
        CODE_LOOKALIKE.to_owned(),
        CODE_LOOKALIKE.replace('\n', "\r\n"),
        // Indented code instead of a fence (8 columns: 4 past item 10's content).
        CODE_LOOKALIKE
            .replace("    ```text\n", "")
            .replace("    ```\n", "")
            .replace("    1. listen", "        1. listen")
            .replace("    2. log", "        2. log"),
    ] {
        for chunk_max in [60, 80, 120] {
            for limit in [200, 250, 400] {
                for size in [1, 7, 1000] {
                    let shown = engine_messages_within(&text, chunk_max, limit, size);
                    if let Err(e) = check_messages(&text, &shown, &Allow::default()) {
                        panic!(
                            "blocks of {chunk_max}, messages of {limit}, deltas of {size}: {e}\n{shown:#?}"
                        );
                    }
                }
            }
        }
    }
}

/// A block over Discord's 17-line cap, split by the engine: the splitter ends the piece
/// that starts in item 2's second paragraph (nested under `2)`) before item `3.`, and that
/// next piece must keep its mark of going on with the list, or the coalescer joins it back
/// to the paragraph and `3.` shows as that paragraph's text. (Found by `render_props` on
/// a random seed.)
#[test]
fn a_line_capped_piece_at_an_item_its_text_would_swallow_starts_a_message() {
    let mut text = String::from("Steps:\n\n1. Install the tools.\n2. Configure it:\n");
    for k in 1..=6 {
        text.push_str(&format!("   {k}) Step {k} of the nested setup.\n"));
    }
    text.push_str(
        "   7) The last nested step, with a longer line of text.\n\n      \
         A second paragraph of the last nested step.\n\
         3. Restart the service.\n\n4. Check the logs.\n",
    );
    let discord = ChannelProfile::by_name("discord").expect("discord");
    for size in [1, 7, 1000] {
        let mut c = Config::for_channel(&discord);
        c.format = replystream::Format::Markdown;
        // Nine lines: the whole list cannot go in one message.
        c.max_lines = Some(9);
        let mut sim = Sim::new(Engine::new(c, 7).expect("valid"));
        for delta in text_checks::deltas(&text, &[size]) {
            sim.push(Input::TextDelta(delta));
        }
        sim.push(Input::MessageEnd(None))
            .push(Input::Finish)
            .run_until_idle();
        let shown: Vec<String> = sim
            .chat
            .lane_texts(Lane::Answer)
            .into_iter()
            .map(str::to_owned)
            .collect();
        judge(&text, &shown);
        assert!(
            shown
                .iter()
                .any(|m| m.starts_with("3. Restart the service.")),
            "deltas {size}: {shown:#?}"
        );
    }
}

/// A fence 4 columns deep in item 1 whose code runs into a line at column 0: that line
/// leaves the item and, in CommonMark, ends the fence with it (no closing line).
const FENCE_LEFT_BY_A_LINE: &str = "1. Build it first:\n    ```\n    cargo build --release\n    cargo test --workspace\n    cargo run --example demo\nThat line left the item.\nMore text after it here.\n";

#[test]
fn a_piece_ends_where_a_line_leaving_the_item_ends_its_fence() {
    // A piece that starts inside the fence (reopened, de-indented) has lost the item: at
    // its top level no line ends the fence, so the line at column 0 and the text after it
    // would show as code. The piece ends at the fence's end instead, whatever room is left,
    // and closes the fence there (synthetic, never reopened): CommonMark shows the code to
    // the message's end anyway, but Discord shows an unclosed fence's lines as text.
    let pieces = split(FENCE_LEFT_BY_A_LINE, 80, SplitMode::Length, None);
    assert_eq!(
        texts(&pieces),
        [
            "1. Build it first:",
            " ```\n cargo build --release\n cargo test --workspace\n ```",
            " ```\n cargo run --example demo\n ```",
            "That line left the item.\nMore text after it here.",
        ]
    );
    assert!(pieces[2].fence_closed && !pieces[3].fence_reopened);
    judge(FENCE_LEFT_BY_A_LINE, &owned(&pieces));
    // With room for all of it, the piece holds the item's start: it shows the fence in
    // the item, which the line ends, as the reply does, and goes on.
    let pieces = split(FENCE_LEFT_BY_A_LINE, 200, SplitMode::Length, None);
    assert_eq!(texts(&pieces), [FENCE_LEFT_BY_A_LINE.trim_end()]);
    for (max, size) in [(45, 1), (60, 7), (80, 1000), (100, 1)] {
        let config = ChunkerConfig {
            min: 1,
            max,
            break_preference: BreakPreference::Paragraph,
            flush_on_paragraph: false,
            metric: LengthMetric::Chars,
        };
        let blocks = run_chunker(config, common::deltas(FENCE_LEFT_BY_A_LINE, size));
        judge(FENCE_LEFT_BY_A_LINE, &owned(&blocks));
        let messages = engine_messages(FENCE_LEFT_BY_A_LINE, max, size);
        judge(FENCE_LEFT_BY_A_LINE, &messages);
        // Every piece and message that opens a fence closes it (as Discord needs), read
        // line by line here: a line of three or more backticks after at most 3 spaces.
        let fence_lines = |t: &str| {
            t.lines()
                .filter(|l| {
                    l.trim_start_matches(' ').starts_with("```")
                        && l.len() - l.trim_start_matches(' ').len() <= 3
                })
                .count()
        };
        for t in owned(&blocks).iter().chain(&messages) {
            assert_eq!(fence_lines(t) % 2, 0, "max {max}, deltas of {size}: {t:?}");
        }
    }
}

#[test]
fn a_fence_its_item_ends_right_after_its_opening_line_ends_there_with_crlf_too() {
    // The item's fence holds no code: the blank line and the heading that leaves the item
    // end it at its opening line. With CRLF the opening line's `\r` was read as code, so
    // the piece cut before the blank line closed the fence ("\n~~~") and the next piece
    // sent the opening line again, reopened (found by engine_props at seed 328).
    let lf = "1. Build it first, with the release flags on:\n\n    cargo build --release\n    ~~~\n\n## Next\nMore text.\n";
    for eol in ["\n", "\r\n"] {
        let text = lf.replace('\n', eol);
        let pieces = split(&text, 40, SplitMode::Length, None);
        let want = [
            "1. Build it first, with the release".to_owned(),
            "flags on:".to_owned(),
            format!("cargo build --release{eol}~~~"),
            format!("## Next{eol}More text."),
        ];
        assert_eq!(texts(&pieces), want, "{eol:?}");
        judge(&text, &owned(&pieces));
        for size in [1, 7, text.len()] {
            let config = ChunkerConfig {
                min: 1,
                max: 40,
                break_preference: BreakPreference::Paragraph,
                flush_on_paragraph: false,
                metric: LengthMetric::Chars,
            };
            let blocks = run_chunker(config, common::deltas(&text, size));
            assert_eq!(texts(&blocks)[2], want[2], "{eol:?} deltas of {size}");
            judge(&text, &owned(&blocks));
            judge(&text, &engine_messages(&text, 40, size));
        }
    }
}

#[test]
fn a_line_after_an_empty_item_that_a_forced_flush_ended_leaves_the_list() {
    // A tool call right after a nested item's marker ends that line there: `  * ` is an
    // empty item, which ends the paragraph before it, so the model's next line (at column
    // 0) is no lazy continuation of it: it leaves the list (CommonMark, as pulldown-cmark
    // reads the text with that line break). The fence-like lines 4 columns deep after it go
    // on with its paragraph. The scanner had kept that line in the item (the empty item's
    // line, ended by the flush, was read as paragraph text), so the chunker took the lines
    // after it as a fence in the item and showed them as code (found by engine_props at
    // seed 332, where a message was de-indented by the item's column).
    let text = "* Options:\n  * `history` keeps the last lines.\n  * `tabSize` sets the tab width:\n    ```\n    tabSize = 8\n    ```\n* Returns an interface.\n";
    let at = text.find("`tabSize`").unwrap();
    let config = ChunkerConfig {
        min: 5,
        max: 40,
        break_preference: BreakPreference::Paragraph,
        flush_on_paragraph: false,
        metric: LengthMetric::Chars,
    };
    let mut chunker = replystream::BlockChunker::new(config).unwrap();
    let mut blocks = Vec::new();
    chunker.push(&text[..at], &mut blocks);
    chunker.flush(&mut blocks);
    chunker.push(&text[at..], &mut blocks);
    chunker.flush(&mut blocks);
    assert_eq!(
        texts(&blocks),
        [
            "* Options:",
            "* `history` keeps the last lines.\n*",
            "`tabSize` sets the tab width:",
            "    ```\n    tabSize = 8\n    ```",
            "* Returns an interface.",
        ]
    );
    assert!(blocks.iter().skip(2).all(|b| b.dedent == 0), "{blocks:#?}");
    // Through the engine, the tool call forcing the flush.
    let mut sim = Sim::new(common::engine(common::config("discord")));
    sim.push(Input::MessageStart)
        .push(Input::TextDelta(&text[..at]))
        .push(Input::ToolStart { name: "search" })
        .push(Input::TextDelta(&text[at..]))
        .push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    let shown = sim.delivered_texts();
    let rest =
        "`tabSize` sets the tab width:\n    ```\n    tabSize = 8\n    ```\n* Returns an interface.";
    assert_eq!(shown[1], rest);
    // What that message shows: one paragraph, the backtick runs pairing as an inline
    // code span over its lines (no code block), then the list.
    use common::render_judge::{describe, render};
    assert_eq!(
        describe(&render(&shown[1])),
        describe(&render(
            "`tabSize` sets the tab width: ```     tabSize = 8     ```\n\n* Returns an interface."
        ))
    );
}
