//! No hidden span is ever delivered (SPEC §2, reasoning off): random reasoning, written in
//! letters no answer uses, is wrapped in random tag forms — attributes, letter case, spacing
//! and line breaks inside the brackets, namespaces, nesting, unclosed blocks, closers that
//! lost their `>`, openers that lost theirs, stray backticks before the tag — mixed with
//! answer text, directives and tokens, cut into random deltas, and pushed through the
//! engine on random channels. No reasoning character may reach any send. Thinking deltas
//! from the provider carry reasoning too.

mod common;

use common::*;
use proptest::prelude::*;
use replystream::{ChannelProfile, Input};

/// Reasoning is written with these letters only; answers never use them.
const SECRET: [char; 4] = ['Σ', 'Θ', 'Ψ', 'Ж'];

fn leaks(text: &str) -> bool {
    text.contains(SECRET)
}

/// An opener and a matching closer in a random form.
fn tag_pair() -> impl Strategy<Value = (String, String)> {
    let name = prop::sample::select(vec![
        "think",
        "THINK",
        "Thinking",
        "thought",
        "antthinking",
        "reasoning",
        "antml:thinking",
        "mm:think",
    ]);
    let ws = prop::sample::select(vec!["", " ", "\t", "\n", "  "]);
    let attrs = prop::sample::select(vec![
        "",
        " type=\"internal\"",
        " id='x' a=b",
        " data-x=\"1\" ",
        " note=\"a/b\"",
    ]);
    (name, ws.clone(), attrs, ws).prop_map(|(name, w1, attrs, w2)| {
        (
            format!("<{w1}{name}{attrs}{w2}>"),
            format!("<{w1}/{w2}{name}{w2}>"),
        )
    })
}

/// A hidden span in one of the forms that must hide (module docs).
fn hidden_span() -> impl Strategy<Value = String> {
    (tag_pair(), tag_pair(), 0u8..6, "[ΣΘΨЖ <>.\n]{1,16}").prop_map(
        |((open, close), (inner_open, inner_close), shape, body)| {
            let body = format!("Σ{body}");
            match shape {
                0 => format!("{open}{body}{close}"),
                1 => format!("{open}{body}{inner_open}{body}{inner_close}{body}{close}"),
                2 => format!("{open}{body}"),
                3 => format!("{open}{body}{}", &close[..close.len() - 1]),
                4 => format!("<think a=\"1\"{body}{close}"),
                _ => format!("{open}{body}{close}{close}"),
            }
        },
    )
}

/// Answer text. A backtick run only ever starts a block (after a blank line), so no inline
/// code span can close around a hidden span: every tag is a real tag, and many sit after
/// an unpaired backtick.
fn answer_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z .,\n]{0,12}",
        Just("\n\n`".to_string()),
        Just("\n\n`` x".to_string()),
        Just("\n\n".to_string()),
        Just("<div>".to_string()),
        Just("a < b > c".to_string()),
        Just("</think>".to_string()),
        Just("<final>".to_string()),
        Just("</final>".to_string()),
        Just("\nMEDIA: https://example.com/a.png\n".to_string()),
        Just("[[reply_to_current]] ".to_string()),
        Just("[[audio_as_voice]]".to_string()),
        Just(" NO_REPLY".to_string()),
        Just("HEARTBEAT_OK ".to_string()),
        Just("é 😄 ".to_string()),
    ]
}

#[derive(Clone, Debug)]
enum Step {
    Text(String),
    Thinking(String),
    NewMessage,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        6 => prop_oneof![answer_piece(), hidden_span()].prop_map(Step::Text),
        1 => "[ΣΘΨЖ ]{1,10}".prop_map(Step::Thinking),
        1 => Just(Step::NewMessage),
    ];
    prop::collection::vec(step, 1..16)
}

fn run(
    steps: &[Step],
    cuts: &[usize],
    channel: usize,
    small: bool,
    message_end: bool,
) -> Vec<String> {
    let profile = &ChannelProfile::ALL[channel];
    let mut c = replystream::Config::for_channel(profile);
    if small {
        c.chunk_min = 10;
        c.chunk_max = 80;
        c.coalesce_min = Some(10);
        c.coalesce_max = Some(80);
    }
    if message_end {
        c.break_mode = replystream::BreakMode::MessageEnd;
    }
    let mut sim = Sim::with_latency(engine(c), 5);
    let mut k = 0;
    for step in steps {
        match step {
            Step::Text(text) => {
                // Cut the text at the next few cut sizes.
                let mut at = 0;
                while at < text.len() {
                    let size = cuts[k % cuts.len()];
                    k += 1;
                    let mut end = (at + size).min(text.len());
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    sim.push(Input::TextDelta(&text[at..end]));
                    at = end;
                }
            }
            Step::Thinking(text) => {
                sim.push(Input::ThinkingDelta(text));
            }
            Step::NewMessage => {
                sim.push(Input::MessageEnd(None)).push(Input::MessageStart);
            }
        }
    }
    sim.push(Input::Finish).run_until_idle();
    assert!(sim.errors.is_empty(), "{:?}", sim.errors);
    sim.sends()
        .into_iter()
        .map(|(_, s)| {
            format!(
                "{} {:?} {:?}",
                s.payload.text, s.payload.media, s.payload.reply_to
            )
        })
        .collect()
}

proptest! {
    #[test]
    fn no_reasoning_character_reaches_a_send(
        steps in steps(),
        cuts in prop::collection::vec(1usize..9, 1..12),
        channel in 0..ChannelProfile::ALL.len(),
        small in any::<bool>(),
        message_end in any::<bool>(),
    ) {
        for send in run(&steps, &cuts, channel, small, message_end) {
            prop_assert!(!leaks(&send), "leaked: {send:?}\nsteps: {steps:?}");
        }
    }
}

/// The generator's forms, each once, as a readable smoke test.
#[test]
fn every_form_hides() {
    for text in [
        "<think type=\"internal\">Σsecret</think>Visible.",
        "<think>Σouter <think>Σinner</think> Σstill outer</think>visible",
        "Start `unclosed <think>Σhidden</think> end",
        "<think a=\"1\"Σsecret</think>after",
        "<think>Σsecret</think and more",
        "<  THINKING\n data-x=\"1\" >Σ</ thinking >ok",
        "<think>Σa `b</think>Answer.",
    ] {
        let sends = run(&[Step::Text(text.to_string())], &[1, 3, 2], 0, true, false);
        assert!(sends.iter().all(|s| !leaks(s)), "{text:?} → {sends:?}");
    }
}
