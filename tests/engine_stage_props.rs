//! Tags, tokens and directives at random delta boundaries, checked exactly (SPEC §2, §13).
//!
//! A plain reply (words, spaces, line breaks, blank lines; no code, no markup) is decorated
//! so that its cleaned text is, by construction, the reply itself: hidden reasoning in random
//! tag forms and `<final>` pairs inside words, `[[audio_as_voice]]` inside a word,
//! `[[reply_to: 42]]` at the start, a heartbeat before and the silent token after, and
//! `MEDIA:` lines between paragraphs. The decorated text is cut into random deltas and
//! streamed on random channels with small limits. Then, exactly, with no whitespace
//! squashed: every send's text is the next piece of the reply (only the whitespace between
//! sends is skipped), the pieces cover the reply in order, the media arrive in order once
//! each, every send carries the reply target, no reasoning character is sent, and the
//! result does not depend on the cut.

mod common;

use common::*;
use proptest::prelude::*;
use replystream::{ChannelProfile, Input, ReplyTarget};

const WORDS: &[&str] = &[
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
    "naïve",
    "café",
    "日本語",
    "👍🏽",
];

#[derive(Clone, Debug)]
struct Reply {
    /// The plain reply: what must be delivered.
    plain: String,
    /// The decorated text the model writes.
    decorated: String,
    /// The media URLs, in order.
    media: Vec<String>,
}

/// A hidden span or a `<final>` pair in a random form.
fn decoration(rng: &mut fastrand::Rng) -> String {
    let names = [
        "think",
        "THINKING",
        "Thought",
        "antthinking",
        "reasoning",
        "mm:think",
    ];
    let name = names[rng.usize(..names.len())];
    let attrs = ["", " type=\"internal\"", " id='x'", "\n data-x=\"1\" "][rng.usize(..4)];
    let sp = ["", " ", "\t"][rng.usize(..3)];
    match rng.u8(..4) {
        0 => format!("<{sp}{name}{attrs}>ΣΘ{sp}Ψ</{sp}{name}{sp}>"),
        1 => format!("<{name}>Σ<{name}{attrs}>Θ</{name}>Ψ</{name}>"),
        2 => format!("<final{attrs}>"),
        _ => "[[audio_as_voice]]".to_string(),
    }
}

fn reply(seed: u64) -> Reply {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut plain = String::new();
    let mut decorated = String::from("[[reply_to: 42]] ");
    if rng.bool() {
        decorated.insert_str(0, "HEARTBEAT_OK\n");
    }
    let mut media = Vec::new();
    let paragraphs = rng.usize(1..5);
    let mut finals_open = false;
    for p in 0..paragraphs {
        if p > 0 {
            plain.push_str("\n\n");
            decorated.push_str("\n\n");
            if rng.bool() {
                let url = format!("https://example.com/{p}.png");
                decorated.push_str(&format!("MEDIA: {url}\n\n"));
                media.push(url);
            }
        }
        for w in 0..rng.usize(1..14) {
            if w > 0 {
                let sep = if rng.u8(..6) == 0 { "\n" } else { " " };
                plain.push_str(sep);
                decorated.push_str(sep);
            }
            let word = WORDS[rng.usize(..WORDS.len())];
            plain.push_str(word);
            // Decorate inside the word (between two chars), where no tidying applies.
            let chars: Vec<char> = word.chars().collect();
            if chars.len() >= 2 && rng.u8(..3) == 0 {
                let at = rng.usize(1..chars.len());
                let head: String = chars[..at].iter().collect();
                let tail: String = chars[at..].iter().collect();
                let mut d = decoration(&mut rng);
                if d.starts_with("<final") {
                    d = if finals_open { "</final>".into() } else { d };
                    finals_open = !finals_open;
                }
                decorated.push_str(&format!("{head}{d}{tail}"));
            } else {
                decorated.push_str(word);
            }
        }
    }
    if finals_open {
        decorated.push_str("</final>");
    }
    decorated.push_str(" NO_REPLY");
    Reply {
        plain,
        decorated,
        media,
    }
}

/// Streams `text` cut at `cuts` (sizes in chars, cycled) and returns the delivered sends.
fn run(text: &str, cuts: &[usize], channel: usize, small: bool) -> Vec<replystream::SendRequest> {
    let mut c = replystream::Config::for_channel(&ChannelProfile::ALL[channel]);
    c.coalesce_idle_ms = 0;
    if small {
        c.chunk_min = 8;
        c.chunk_max = 60;
        c.coalesce_min = Some(8);
        c.coalesce_max = Some(60);
    }
    let mut sim = Sim::new(engine(c));
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let (mut at, mut k) = (0, 0);
    while at < chars.len() {
        let end = (at + cuts[k % cuts.len()]).min(chars.len());
        k += 1;
        let from = chars[at].0;
        let to = chars.get(end).map_or(text.len(), |c| c.0);
        sim.push(Input::TextDelta(&text[from..to]));
        at = end;
    }
    sim.push(Input::Finish).run_until_idle();
    assert!(sim.errors.is_empty(), "{:?}", sim.errors);
    sim.delivered.into_iter().map(|(_, s)| s).collect()
}

fn check(r: &Reply, sends: &[replystream::SendRequest]) -> Result<(), TestCaseError> {
    let mut rest = r.plain.as_str();
    let mut media = Vec::new();
    for send in sends {
        let text = send.payload.text.as_str();
        prop_assert!(!text.contains(['Σ', 'Θ', 'Ψ']), "reasoning sent: {text:?}");
        prop_assert_eq!(
            send.payload.reply_to.as_ref(),
            Some(&ReplyTarget::Id("42".into())),
            "{:?}",
            send
        );
        media.extend(send.payload.media.iter().cloned());
        if text.is_empty() {
            continue;
        }
        rest = rest.trim_start();
        prop_assert!(
            rest.starts_with(text),
            "send {text:?} is not the next piece of the reply; left: {rest:?}"
        );
        rest = &rest[text.len()..];
    }
    prop_assert!(rest.trim().is_empty(), "not delivered: {rest:?}");
    prop_assert_eq!(media, r.media.clone());
    Ok(())
}

proptest! {
    #[test]
    fn decorated_replies_deliver_exactly_the_plain_reply(
        seed in any::<u64>(),
        cuts in prop::collection::vec(1usize..12, 1..8),
        channel in 0..ChannelProfile::ALL.len(),
        small in any::<bool>(),
    ) {
        let r = reply(seed);
        let sends = run(&r.decorated, &cuts, channel, small);
        check(&r, &sends)?;
        // The same sends whatever the cut (no timer fires in between).
        let whole = run(&r.decorated, &[usize::MAX / 2], channel, small);
        let texts = |s: &[replystream::SendRequest]| -> Vec<(String, Vec<String>)> {
            s.iter().map(|s| (s.payload.text.clone(), s.payload.media.clone())).collect()
        };
        prop_assert_eq!(texts(&sends), texts(&whole));
    }
}
