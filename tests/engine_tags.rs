//! Thinking tags and reasoning modes (SPEC §2, §8).

mod common;

use common::*;
use replystream::{Input, Lane, ReasoningMode};

#[test]
fn thinking_split_across_deltas_is_hidden() {
    let mut sim = Sim::new(engine(config("generic")));
    for d in [
        "<thi",
        "nk>secret pla",
        "n</th",
        "ink>The answer ",
        "is 42.",
    ] {
        sim.push(Input::TextDelta(d));
    }
    sim.push(Input::Finish).run_until_idle();
    assert_eq!(sim.sent_texts(), ["The answer is 42."]);
}

#[test]
fn tags_inside_code_are_text() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta("Use `<think>` like this."))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sent_texts(), ["Use `<think>` like this."]);
}

/// The texts sent for `deltas` (then `Finish`) with reasoning `on` and `config`, and the
/// lane of each.
fn sent_with_reasoning(config: &replystream::Config, deltas: &[&str]) -> Vec<(Lane, String)> {
    let mut c = config.clone();
    c.reasoning = ReasoningMode::On;
    let mut sim = Sim::new(engine(c));
    for d in deltas {
        sim.push(Input::TextDelta(d));
    }
    sim.push(Input::Finish).run_until_idle();
    sim.sends()
        .into_iter()
        .map(|(_, send)| (send.payload.lane, send.payload.text.clone()))
        .collect()
}

/// `text` whole, cut in two at every char boundary, and one char at a time: all send
/// `expected` (lane, text) in this order.
fn reasoning_every_split(config: &replystream::Config, text: &str, expected: &[(Lane, &str)]) {
    let expected: Vec<(Lane, String)> = expected.iter().map(|(l, t)| (*l, t.to_string())).collect();
    assert_eq!(
        sent_with_reasoning(config, &[text]),
        expected,
        "whole {text:?}"
    );
    for (i, _) in text.char_indices().skip(1) {
        assert_eq!(
            sent_with_reasoning(config, &[&text[..i], &text[i..]]),
            expected,
            "split at {i} of {text:?}"
        );
    }
    let chars: Vec<String> = text.chars().map(String::from).collect();
    let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(
        sent_with_reasoning(config, &chars),
        expected,
        "char by char {text:?}"
    );
}

/// Reasoning `on` (SPEC §8, issue 20 item 3): the reasoning reaches the user before the
/// answer it belongs to, while blocks stream (it used to come last, after the answer).
#[test]
fn reasoning_on_precedes_the_answer_it_belongs_to() {
    reasoning_every_split(
        &config("generic"),
        "<think>weigh options</think>Pick B.",
        &[
            (Lane::Reasoning, "Reasoning:\n_weigh options_"),
            (Lane::Answer, "Pick B."),
        ],
    );
    // Thinking as its own input.
    let mut c = config("generic");
    c.reasoning = ReasoningMode::On;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::ThinkingDelta("Check the units."))
        .push(Input::ThinkingEnd)
        .push(Input::TextDelta("It is 42 km."))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(
        sim.sent_texts(),
        ["Reasoning:\n_Check the units._", "It is 42 km."]
    );
}

/// Reasoning in the middle of a message lands between the answer written before it and
/// the answer written after it, even where both would have been merged into one block.
#[test]
fn reasoning_on_in_the_middle_of_a_message_lands_where_it_was_written() {
    let text = "<think>first</think>Here is the chart.\n\n\
                <think>Also the CSV? Yes.</think>The raw numbers, 界面 👩‍💻, are attached.";
    reasoning_every_split(
        &config("generic"),
        text,
        &[
            (Lane::Reasoning, "Reasoning:\n_first_"),
            (Lane::Answer, "Here is the chart."),
            (Lane::Reasoning, "Reasoning:\n_Also the CSV? Yes._"),
            (Lane::Answer, "The raw numbers, 界面 👩‍💻, are attached."),
        ],
    );
}

/// In `message_end` mode nothing leaves before the message ends: all of its reasoning goes
/// first, then its answer (SPEC §8), whatever the split.
#[test]
fn reasoning_on_in_message_end_mode_goes_first_whole() {
    let mut c = config("generic");
    c.break_mode = replystream::BreakMode::MessageEnd;
    reasoning_every_split(
        &c,
        "<think>a</think>Para one.\n\n<think>b</think>Para two.",
        &[
            (Lane::Reasoning, "Reasoning:\n_a_\n\n_b_"),
            (Lane::Answer, "Para one.\n\nPara two."),
        ],
    );
}

/// Without block streaming the answer goes out as the final at the end, after the
/// reasoning; reasoning written after every answer block left can only follow them.
#[test]
fn reasoning_on_with_finals_and_after_the_answer() {
    let mut finals = config("generic");
    finals.block_streaming = false;
    reasoning_every_split(
        &finals,
        "<think>weigh options</think>Pick B.",
        &[
            (Lane::Reasoning, "Reasoning:\n_weigh options_"),
            (Lane::Answer, "Pick B."),
        ],
    );
    let mut c = small_config();
    c.reasoning = ReasoningMode::On;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::TextDelta(
        "The answer is a full paragraph of its own.\n\n",
    ))
    .run_until_idle();
    sim.push(Input::ThinkingDelta("An afterthought."))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(
        sim.sent_texts(),
        [
            "The answer is a full paragraph of its own.",
            "Reasoning:\n_An afterthought._"
        ]
    );
}

#[test]
fn reasoning_stream_uses_its_own_lane() {
    let mut c = config("generic");
    c.reasoning = ReasoningMode::Stream;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::ThinkingDelta("Considering the question."))
        .push(Input::ThinkingEnd)
        .push(Input::TextDelta("Answer."))
        .push(Input::Finish)
        .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 2, "{sends:#?}");
    assert_eq!(sends[0].1.payload.lane, Lane::Reasoning);
    assert_eq!(sends[1].1.payload.text, "Answer.");
}

#[test]
fn reasoning_off_drops_it() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::ThinkingDelta("hidden"))
        .push(Input::TextDelta("Shown."))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sent_texts(), ["Shown."]);
}

#[test]
fn reasoning_on_comes_first_in_message_end_mode() {
    let mut c = config("generic");
    c.reasoning = ReasoningMode::On;
    c.break_mode = replystream::BreakMode::MessageEnd;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::MessageStart)
        .push(Input::TextDelta(
            "<think>check the units</think>It is 42 km.",
        ))
        .push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    let texts = sim.sent_texts();
    assert_eq!(texts, ["Reasoning:\n_check the units_", "It is 42 km."]);
}

/// The reply's sent texts for `deltas` on the generic profile (reasoning off).
fn sent(deltas: &[&str]) -> Vec<String> {
    let mut sim = Sim::new(engine(config("generic")));
    for d in deltas {
        sim.push(Input::TextDelta(d));
    }
    sim.push(Input::Finish).run_until_idle();
    sim.sent_texts()
}

/// `text` cut at every char boundary into two deltas, and one char at a time, all send
/// `expected`.
fn sent_for_every_split(text: &str, expected: &[&str]) {
    assert_eq!(sent(&[text]), expected, "whole {text:?}");
    for (i, _) in text.char_indices().skip(1) {
        assert_eq!(
            sent(&[&text[..i], &text[i..]]),
            expected,
            "split at {i} of {text:?}"
        );
    }
    let chars: Vec<String> = text.chars().map(String::from).collect();
    let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(sent(&chars), expected, "char by char {text:?}");
}

#[test]
fn a_thinking_tag_with_attributes_hides_its_content() {
    sent_for_every_split(
        "<think type=\"internal\">Secret.</think>Visible.",
        &["Visible."],
    );
    sent_for_every_split("<final data-x=\"1\">The answer.</final>", &["The answer."]);
    sent_for_every_split("<THINKING id='a'>x</Thinking> Shown.", &["Shown."]);
}

#[test]
fn nested_thinking_stays_hidden_until_the_outermost_closes() {
    sent_for_every_split(
        "<think>outer <think>inner</think> still outer</think>visible",
        &["visible"],
    );
}

#[test]
fn an_unpaired_backtick_before_a_tag_does_not_reveal_it() {
    sent_for_every_split(
        "Start `unclosed <think>hidden</think> end",
        &["Start `unclosed end"],
    );
    // The same in a later paragraph of a longer reply, with the span ended by a blank line.
    let reply = "Intro line.\n\nA `tick <think>secret plan</think>\n\nOutro.";
    let texts = sent(&[reply]);
    assert!(texts.iter().all(|t| !t.contains("secret")), "{texts:?}");
    assert_eq!(texts.concat(), "Intro line.\n\nA `tick \n\nOutro.");
}

#[test]
fn a_tag_inside_a_code_span_that_closes_later_is_text() {
    sent_for_every_split(
        "Use `<think>x</think>` here.",
        &["Use `<think>x</think>` here."],
    );
}

#[test]
fn a_malformed_opener_fails_closed() {
    sent_for_every_split(
        "<think type=\"internal\"Secret.</think>Visible.",
        &["Visible."],
    );
    // A closer that lost its `>` closes nothing: the rest stays hidden.
    assert!(sent(&["<think>a secret</think and more"]).is_empty());
}

#[test]
fn self_closing_thinking_is_removed() {
    sent_for_every_split("a <thinking/> b", &["a b"]);
}

#[test]
fn require_final_tag_sends_only_the_final() {
    let mut c = config("generic");
    c.require_final_tag = true;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::TextDelta(
        "<think>plan</think>chatter <final>The answer.</final> trailing",
    ))
    .push(Input::Finish)
    .run_until_idle();
    assert_eq!(sim.sent_texts(), ["The answer."]);
}

#[test]
fn a_stray_backtick_stops_at_its_block_so_later_tags_still_hide() {
    // A code span never crosses a block boundary (CommonMark): a stray backtick in a heading
    // or a list item is literal once that block ends, so a tag on the next line is a tag.
    // A real span after the stray run, in the same block, still holds text.
    let cases = [
        (
            "# Title `stray\n<think>secret</think>Visible.",
            "# Title `stray\nVisible.",
        ),
        ("- a `stray\n- <think>secret</think>b", "- a `stray\n- b"),
        (
            "> a `` stray `<think>`\n\n<think>secret</think>after",
            "> a `` stray `<think>`\n\nafter",
        ),
    ];
    for (reply, shown) in cases {
        for size in [1, 3, reply.len()] {
            let mut sim = Sim::new(engine(config("generic")));
            let mut rest = reply;
            while !rest.is_empty() {
                let mut k = size.min(rest.len());
                while !rest.is_char_boundary(k) {
                    k += 1;
                }
                sim.push(Input::TextDelta(&rest[..k]));
                rest = &rest[k..];
            }
            sim.push(Input::Finish).run_until_idle();
            assert_eq!(
                sim.sent_texts().join("|"),
                shown,
                "{reply:?} in {size}-byte deltas"
            );
            assert!(!sim.sent_texts().join("").contains("secret"));
        }
    }
}

/// The answer and the reasoning sent for `text` pushed in deltas of `size` bytes (on char
/// boundaries), reasoning `on`.
fn sent_in_deltas(text: &str, size: usize) -> Vec<(Lane, String)> {
    let mut deltas = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        deltas.push(&text[at..end]);
        at = end;
    }
    sent_with_reasoning(&config("generic"), &deltas)
}

/// Plain text in small deltas takes the engine's plain path, where the tag filter reads the
/// text only later, in a batch: a tag after a long run of it (across the 256-byte batches in
/// which the stages drop decided text) is still read with all the text before it, so a tag
/// inside a code span that opened in that run stays text, and one outside it still hides.
#[test]
fn tags_after_long_plain_runs_read_the_whole_run() {
    let prose = "Plain words, one line after another, with nothing to act on. ".repeat(5);
    let text = format!(
        "{prose}Use `a {prose} <think>in code</think>` here.\n\n{prose}<think>secret é</think>Done é."
    );
    let whole = sent_in_deltas(&text, text.len());
    for size in [1, 3, 4, 7, 64] {
        assert_eq!(sent_in_deltas(&text, size), whole, "deltas of {size}");
    }
    let answer: String = whole
        .iter()
        .filter(|(lane, _)| *lane == Lane::Answer)
        .map(|(_, t)| t.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    assert!(answer.contains("<think>in code</think>"), "{answer:?}");
    assert!(!answer.contains("secret"), "{answer:?}");
    assert!(answer.ends_with("Done é."), "{answer:?}");
}
