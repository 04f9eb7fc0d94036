//! The message rule (DESIGN §4), one test per defect of issue 7 that the engine owned,
//! through the public API: inside one send, the text between two pieces of the same
//! assistant message is exactly the source text between them; synthetic fence lines only
//! at a send's edges; the joiner only where the source has no separator; no send starts or
//! ends with separator whitespace; reasoning shown as text is well-formed in every message.

mod common;

use std::collections::HashSet;

use common::reconstruct::{Rule, Source, check_answer, seen_sends};
use common::*;
use replystream::{BreakPreference, Config, Input, Lane, LengthMetric, ReasoningMode};

/// Every send of `sim` checked against `text` (one assistant message, `TextEnd` at
/// `seams`) with the independent checker: exact spans, edges, order, nothing lost.
fn assert_exact(sim: &Sim, config: &Config, text: &str, seams: Vec<usize>) {
    assert_exact_with(sim, config, text, seams, true);
}

fn assert_exact_with(
    sim: &Sim,
    config: &Config,
    text: &str,
    seams: Vec<usize>,
    all_fences_repairable: bool,
) {
    let delivered: HashSet<_> = sim.delivered.iter().map(|(_, s)| s.send_id).collect();
    let log: Vec<_> = sim
        .sends()
        .into_iter()
        .map(|(_, s)| s)
        .filter(|s| s.payload.lane == Lane::Answer)
        .collect();
    let sends = seen_sends(log.iter(), &delivered);
    let rule = Rule {
        joiner: match config.break_preference {
            BreakPreference::Newline => "\n",
            BreakPreference::Sentence => " ",
            _ => "\n\n",
        },
        metric: config.metric,
        limit: config.text_limit,
        max_lines: config.max_lines,
        graphemes: true,
        all_fences_repairable,
    };
    if let Err(e) = check_answer(&[Source::new(text, seams)], &sends, &rule) {
        panic!("{e}\nsends: {:#?}", sim.sent_texts());
    }
}

/// `text` streamed in 16-char deltas with no time between them, the turn finished.
fn streamed(config: &Config, text: &str) -> Sim {
    let mut sim = Sim::new(engine(config.clone()));
    sim.stream(text, 16, 0).push(Input::Finish).run_until_idle();
    sim
}

// ---- defect 1: code blocks broken up inside one message ---------------------------------

#[test]
fn defect_1_a_code_block_that_fits_one_message_arrives_as_one_code_block() {
    let mut text = String::from("Here is the code:\n\n```python\n");
    for i in 0..150 {
        text.push_str(&format!("print('line {i:03}')\n"));
    }
    text.push_str("```\n\nDone.");
    assert!(text.len() > 2700, "more than two chunker blocks");
    let config = config("telegram");
    let sim = streamed(&config, &text);
    // The chunker cut inside the fence twice; the coalescer merged the blocks, so the
    // close/reopen pairs between them are gone: one message, one code block, as written.
    assert_eq!(sim.sent_texts(), [text.as_str()]);
    assert_exact(&sim, &config, &text, Vec::new());
}

#[test]
fn defect_1_one_long_code_line_stays_one_line() {
    let text = format!("```python\ndata = \"{}\"\n```", "x".repeat(2000));
    let sim = streamed(&config("telegram"), &text);
    assert_eq!(sim.sent_texts(), [text.as_str()]);
}

#[test]
fn defect_1_a_code_block_longer_than_a_message_is_closed_and_reopened_only_at_the_cut() {
    let mut text = String::from("```rust\n");
    for i in 0..200 {
        text.push_str(&format!("let value_{i:03} = compute({i});\n"));
    }
    text.push_str("```");
    let config = config("discord");
    let sim = streamed(&config, &text);
    let sent = sim.sent_texts();
    assert!(sent.len() > 1);
    for s in &sent {
        // One code block per message: one opening line, one closing line.
        assert!(s.starts_with("```rust\n") && s.ends_with("\n```"), "{s:?}");
        assert_eq!(s.matches("```").count(), 2, "{s:?}");
    }
    assert_exact(&sim, &config, &text, Vec::new());
}

// ---- defect 2: whitespace changed inside a message ---------------------------------------

/// Thirty two-sentence lines, a tight list and CJK sentences with no spaces: Discord's
/// 17-line cap re-splits the chunker's blocks.
fn discord_reply() -> String {
    let mut text = String::new();
    for i in 0..30 {
        text.push_str(&format!(
            "This is line {i} on one line. This second sentence of {i} follows it.\n"
        ));
    }
    text.push('\n');
    for i in 0..30 {
        text.push_str(&format!("- item {i}\n"));
    }
    text.push('\n');
    for i in 0..60 {
        text.push_str(&format!("句子{i}。消息"));
        if i % 3 == 2 {
            text.push('\n');
        }
    }
    text
}

#[test]
fn defect_2_pieces_of_a_line_capped_block_keep_their_source_separators() {
    let text = discord_reply();
    let config = config("discord");
    let sim = streamed(&config, &text);
    let sent = sim.sent_texts();
    assert!(sent.len() > 3, "the line cap splits: {sent:#?}");
    for s in &sent {
        assert!(s.lines().count() <= 17, "{s:?}");
        assert!(!s.contains("one line.\n\nThis second"), "{s:?}");
        assert!(
            !s.contains("\n\n- item"),
            "the tight list stays tight: {s:?}"
        );
        assert!(!s.contains("。\n\n消息"), "{s:?}");
    }
    assert_exact(&sim, &config, &text, Vec::new());
}

#[test]
fn defect_2_the_sentence_joiner_never_shares_a_line_with_a_fence() {
    let mut config = config("generic");
    config.break_preference = BreakPreference::Sentence;
    config.chunk_min = 1;
    config.coalesce_min = Some(400);
    let parts = ["Intro sentence one.", "```python\nx = 1\n```", "After."];
    let mut sim = Sim::new(engine(config));
    for part in parts {
        sim.push(Input::TextDelta(part)).push(Input::TextEnd(None));
    }
    sim.push(Input::Finish).run_until_idle();
    // (The source, three text blocks with no separator, is "Intro sentence
    // one.```python…": no fence in it as one text. Each text block is its own Markdown.)
    assert_eq!(
        sim.sent_texts(),
        ["Intro sentence one.\n```python\nx = 1\n```\nAfter."]
    );
}

#[test]
fn defect_2_text_blocks_are_joined_by_the_joiner_and_nothing_else() {
    // Across `TextEnd` the source has no separator: the configured joiner goes there, and
    // only there; inside each text block the source's own separators stay.
    let mut config = config("generic");
    config.chunk_min = 10;
    config.chunk_max = 40;
    config.coalesce_min = Some(400);
    let parts = [
        "One. Two.\nThree four five six seven.",
        "Eight nine.\n\n- a\n- b",
    ];
    let mut sim = Sim::new(engine(config.clone()));
    for part in parts {
        sim.stream(part, 3, 0).push(Input::TextEnd(None));
    }
    sim.push(Input::Finish).run_until_idle();
    assert_eq!(
        sim.sent_texts(),
        ["One. Two.\nThree four five six seven.\n\nEight nine.\n\n- a\n- b"]
    );
}

// ---- defect 8: messages start with a leftover separator ----------------------------------

#[test]
fn defect_8_no_send_starts_or_ends_with_a_separator() {
    // Sentence cuts, a coalescer that flushes at 100 units and an idle timer between
    // slow deltas: every send starts after a separator.
    let mut config = config("generic");
    config.break_preference = BreakPreference::Sentence;
    config.chunk_min = 20;
    config.chunk_max = 60;
    config.coalesce_min = Some(30);
    config.coalesce_max = Some(100);
    config.coalesce_idle_ms = 300;
    let text: String = (0..30)
        .map(|i| format!("Sentence {i} of the reply. "))
        .collect();
    let mut sim = Sim::with_latency(engine(config.clone()), 50);
    sim.stream(&text, 5, 40)
        .push(Input::Finish)
        .run_until_idle();
    let sent = sim.sent_texts();
    assert!(sent.len() > 5, "{sent:#?}");
    for s in &sent {
        assert!(s.starts_with("Sentence "), "{s:?}");
        assert!(s.ends_with("of the reply."), "{s:?}");
    }
    assert_exact(&sim, &config, &text, Vec::new());
}

#[test]
fn defect_8_text_after_media_does_not_start_with_the_separator_before_it() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.stream("A [[media:https://example.com/a.png]] B", 5, 0)
        .push(Input::Finish)
        .run_until_idle();
    let sends: Vec<_> = sim
        .sends()
        .into_iter()
        .map(|(_, s)| (s.payload.text, s.payload.media))
        .collect();
    assert_eq!(
        sends,
        [
            ("A".to_owned(), vec!["https://example.com/a.png".to_owned()]),
            ("B".to_owned(), vec![]),
        ]
    );

    let mut sim = Sim::new(engine(config("generic")));
    sim.stream(
        "Before the chart.\nMEDIA: https://example.com/c.png\n After the chart.",
        5,
        0,
    )
    .push(Input::Finish)
    .run_until_idle();
    assert_eq!(sim.sent_texts(), ["Before the chart.", "After the chart."]);
}

// ---- defect 9: reasoning shown as text is malformed when long ----------------------------

/// The reasoning text a reasoning message shows: the header and the italics removed.
fn unitalic(message: &str) -> String {
    let body = message.strip_prefix("Reasoning:\n").unwrap_or(message);
    body.split('\n')
        .map(|line| {
            let (marker, rest) =
                line.split_at(line.len() - line.trim_start_matches(['-', ' ']).len());
            match rest.strip_prefix('_').and_then(|r| r.strip_suffix('_')) {
                Some(inner) => format!("{marker}{inner}"),
                None => line.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn reasoning_sends(sim: &Sim) -> Vec<String> {
    sim.sends()
        .into_iter()
        .filter(|(_, s)| s.payload.lane == Lane::Reasoning)
        .map(|(_, s)| s.payload.text)
        .collect()
}

#[test]
fn defect_9_long_reasoning_is_well_formed_in_every_message() {
    let mut config = config("telegram");
    config.reasoning = ReasoningMode::On;
    let steps: Vec<String> = (0..=110)
        .map(|i| format!("Reasoning step {i} considers the options carefully."))
        .collect();
    let reasoning = steps.join("\n\n");
    let mut sim = Sim::new(engine(config));
    sim.push(Input::ThinkingDelta(&reasoning))
        .push(Input::ThinkingEnd)
        .push(Input::TextDelta("The answer."))
        .push(Input::Finish)
        .run_until_idle();
    let messages = reasoning_sends(&sim);
    assert!(messages.len() > 1, "{messages:#?}");
    assert!(messages[0].starts_with("Reasoning:\n_Reasoning step 0 considers"));
    let mut shown = Vec::new();
    for m in &messages {
        assert_ne!(m.trim(), "Reasoning:", "the header is never alone");
        assert!(LengthMetric::Utf16.len(m) <= 4000);
        for line in m
            .split('\n')
            .filter(|l| !l.is_empty() && *l != "Reasoning:")
        {
            // Italics open and close on the same line: never across a blank line or a cut.
            assert!(line.starts_with('_') && line.ends_with('_'), "{line:?}");
            assert_eq!(line.matches('_').count(), 2, "{line:?}");
        }
        shown.push(unitalic(m));
    }
    assert_eq!(shown.join("\n\n"), reasoning, "every step once, in order");
    // The reasoning goes before the answer it belongs to.
    assert_eq!(
        sim.sent_texts().last().map(String::as_str),
        Some("The answer.")
    );
}

#[test]
fn defect_9_a_reasoning_paragraph_longer_than_a_message_is_italic_in_every_piece() {
    let mut config = config("discord");
    config.reasoning = ReasoningMode::On;
    let paragraph = "Weighing option A against option B in detail. ".repeat(120);
    let reasoning = format!("- first point\n- second point\n\n{}", paragraph.trim());
    let mut sim = Sim::new(engine(config));
    sim.push(Input::TextDelta(&format!(
        "<think>{reasoning}</think>Done."
    )))
    .push(Input::Finish)
    .run_until_idle();
    let messages = reasoning_sends(&sim);
    assert!(messages.len() >= 3, "{messages:#?}");
    assert!(
        messages[0].starts_with("Reasoning:\n- _first point_\n- _second point_"),
        "{:?}",
        messages[0]
    );
    for m in &messages {
        assert!(
            m.chars().count() <= 2000 && m.lines().count() <= 17,
            "{m:?}"
        );
        for line in m
            .split('\n')
            .filter(|l| !l.is_empty() && *l != "Reasoning:")
        {
            let content = line.strip_prefix("- ").unwrap_or(line);
            // Opened and closed on every line, so also at each cut.
            assert!(content.starts_with('_') && content.ends_with('_'), "{m:?}");
        }
    }
    // Nothing lost: the words of the reasoning, in order, separators aside.
    let words: Vec<String> = messages.iter().map(|m| unitalic(m)).collect();
    let got: Vec<&str> = words.iter().flat_map(|w| w.split_whitespace()).collect();
    let want: Vec<&str> = reasoning.split_whitespace().collect();
    assert_eq!(got, want);
}

#[test]
fn an_indented_code_line_cut_in_its_middle_merges_back_as_written() {
    // The chunker continues a long indented code line after 4 synthetic spaces; merged back
    // into one send, the line is one line again, as the source wrote it.
    let text = format!(
        "Intro paragraph.\n\n    let data = \"{}\";\n    let more = 1;\n\nAfter.",
        "x".repeat(90)
    );
    let mut c = config("generic");
    c.chunk_min = 30;
    c.chunk_max = 40;
    c.coalesce_min = Some(1000);
    c.coalesce_max = Some(1000);
    c.coalesce_idle_ms = 0;
    // The chunker does cut the line in its middle and continue it after 4 spaces.
    let mut chunker = replystream::BlockChunker::new(replystream::ChunkerConfig {
        min: 30,
        max: 40,
        ..replystream::ChunkerConfig::default()
    })
    .expect("config");
    let mut blocks = Vec::new();
    chunker.push(&text, &mut blocks);
    chunker.flush(&mut blocks);
    assert!(blocks.iter().any(|b| b.indent_reopened), "{blocks:#?}");
    let mut sim = Sim::new(engine(c.clone()));
    sim.stream(&text, 3, 0)
        .push(Input::TextEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sent_texts(), std::slice::from_ref(&text));
    assert_exact(&sim, &c, &text, vec![]);
}

#[test]
fn a_fence_closed_right_after_a_cut_shows_its_own_closing_line() {
    // Found by a long property run: the chunker cut right before the fence's own closing
    // line (after a blank code line), so the next block was only the reopened fence and its
    // closer. Merged, the send showed the synthetic close ("````") in the middle instead of
    // the source's blank line and "`````".
    let text = "````js title=\"short\"\nprint('line 835')\nprint('line 307')\n\n`````\n\n    print('line 243')\n\nEnd.";
    let mut c = config("telegram");
    c.chunk_min = 10;
    c.chunk_max = 27;
    c.coalesce_min = Some(1);
    c.metric = LengthMetric::Graphemes;
    let mut sim = Sim::new(engine(c.clone()));
    sim.stream(text, 1, 0).push(Input::Finish).run_until_idle();
    assert_eq!(sim.sent_texts(), [text]);
    assert_exact(&sim, &c, text, vec![]);
}

#[test]
fn a_final_never_starts_with_a_reopened_fence_and_its_own_closer() {
    // Found by a long property run: an empty fence whose opening line nearly fills the limit,
    // sent in the final after a timeout. The splitter closed it after its opening line; the
    // next piece reopened it right before its own closing line: an empty code block.
    let text = "Some words first.\n\n~~~~~javascript title=\"an info string that is long enough to matter here\"\n~~~~~~\nThen the text after the fence goes on.";
    let mut c = config("telegram");
    c.text_limit = 79;
    c.delivery_timeout_ms = 2000;
    let policy: AckPolicy = Box::new(|send, _| match send.kind {
        replystream::SendKind::Final => Ack::Deliver { after_ms: 0 },
        _ => Ack::Hang,
    });
    let mut sim = Sim::with_policy(engine(c.clone()), policy);
    sim.stream(text, 1, 0).push(Input::Finish).run_until_idle();
    for s in sim.sent_texts() {
        let first = s.lines().next().unwrap_or("");
        let second = s.lines().nth(1).unwrap_or("");
        assert!(
            !(first.starts_with("~~~~~") && second.starts_with("~~~~~~")),
            "{:#?}",
            sim.sent_texts()
        );
    }
    assert_exact(&sim, &c, text, vec![]);
}

/// A fence too wide to close and reopen at a 16-grapheme limit: "  ~~~~~" is 7 graphemes, so
/// a close and a bare reopen take 16 before any code (SPEC §9: the limit wins, it is cut
/// plainly). The code lines are cut so that a block ends right before its closing line.
const UNREPAIRABLE: &str = "Intro.\n\n  ~~~~~rust\nx=1;\nprint(\"done\");\n~~~~~\n\nfox jumps.";

fn unrepairable_config() -> Config {
    let mut c = config("telegram");
    c.text_limit = 16;
    c.metric = LengthMetric::Graphemes;
    // The Markdown as written: a rendered format refuses a limit this small (its growth at
    // the least room would not fit).
    c.format = replystream::Format::Markdown;
    c
}

#[test]
fn the_closing_line_of_a_fence_cut_plainly_is_sent_as_written() {
    // Found by a long property run (seed 5555, 8000 cases): with no synthetic close before
    // it, the fence's own closing line starts the next send, as the source wrote it. The
    // checker used to take that line for one a synthetic close had already shown.
    let c = unrepairable_config();
    let mut sim = Sim::new(engine(c.clone()));
    sim.stream(UNREPAIRABLE, 1, 0)
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(
        sim.sent_texts(),
        [
            "Intro.",
            // A fence opening line keeps its indentation at a send's start.
            "  ~~~~~rust\nx=1;",
            "print(\"done\");",
            "~~~~~\n\nfox",
            "jumps."
        ]
    );
    assert_exact_with(&sim, &c, UNREPAIRABLE, vec![], false);
}

/// The finals of [`UNREPAIRABLE`] streamed when the block sends after the first
/// `delivered` never arrive (the finals carry them), checked with the independent checker.
fn finals_after_lost_blocks(delivered: u64) -> Vec<String> {
    let c = unrepairable_config();
    let policy: AckPolicy = Box::new(move |send, _| match send.kind {
        replystream::SendKind::Block if send.send_id.0 > delivered => Ack::Hang,
        _ => Ack::Deliver { after_ms: 0 },
    });
    let mut sim = Sim::with_policy(engine(c.clone()), policy);
    sim.stream(UNREPAIRABLE, 1, 0)
        .push(Input::Finish)
        .run_until_idle();
    assert_exact_with(&sim, &c, UNREPAIRABLE, vec![], false);
    sim.sends()
        .into_iter()
        .filter(|(_, s)| s.kind == replystream::SendKind::Final)
        .map(|(_, s)| s.payload.text.clone())
        .collect()
}

#[test]
fn a_final_after_a_plain_cut_keeps_the_fences_own_closing_line() {
    // The block ending right before the closing line was cut plainly (no synthetic close
    // showed that line); the block holding it never arrived. The final used to start after
    // the closing line (lost), taking it for one the synthetic close had shown.
    assert_eq!(finals_after_lost_blocks(3), ["~~~~~\n\nfox", "jumps."]);
}

#[test]
fn a_final_inside_a_fence_cut_plainly_reads_its_closing_line_as_one() {
    // The final starts in the code of that fence: it is not reopened (a piece cut inside it
    // is not), and its closing line is not taken for a new fence's opening line (which the
    // splitter would close and reopen around the prose after it).
    assert_eq!(
        finals_after_lost_blocks(2),
        ["print(\"done\");", "~~~~~\n\nfox", "jumps."]
    );
}
