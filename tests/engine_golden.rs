//! Reviewed timelines of the engine: representative turns rendered as text and pinned with
//! insta snapshots (`tests/snapshots/`), so a change of behaviour shows as a readable diff.
//!
//! Each scenario streams one sample reply through the engine on the virtual clock
//! ([`Sim`]) in 16-byte deltas 20 ms apart, finishes the turn and renders every action:
//! time, kind, operation, send id, length in the channel's metric, line count, when the
//! host confirmed it, then the text, one line per row. An intended change is reviewed and
//! accepted with
//!
//! ```sh
//! INSTA_UPDATE=always cargo test --test engine_golden   # or: cargo insta review
//! ```

use std::fmt::Write as _;

use replystream::sim::Sim;
use replystream::{Action, ChannelProfile, Config, Engine, HumanDelay, Input, Lane, ReasoningMode};

const DELTA_BYTES: usize = 16;
/// Virtual time between two deltas: long enough for acks and some idle timers to land
/// between deltas, short enough that most blocks are coalesced.
const GAP_MS: u64 = 20;
const ACK_MS: u64 = 150;
const SEED: u64 = 7;

const CODE: &str = include_str!("data/code-heavy.md");
const PROSE: &str = include_str!("data/prose-paragraphs.md");
const THINKING: &str = include_str!("data/directives-and-thinking.md");
const LISTS: &str = include_str!("data/lists-tables.md");
const UNICODE: &str = include_str!("data/unicode-mix.md");

fn channel(name: &str) -> Config {
    Config::for_channel(&ChannelProfile::by_name(name).expect("profile"))
}

/// Small blocks and messages on the generic channel, so a short reply makes several
/// messages.
fn small() -> Config {
    let mut c = channel("generic");
    c.chunk_min = 40;
    c.chunk_max = 120;
    c.coalesce_min = Some(60);
    c.coalesce_max = Some(300);
    c
}

/// Streams `text` through an engine with `config`, finishes the turn and renders the
/// timeline.
fn timeline(title: &str, config: Config, text: &str) -> String {
    let metric = config.metric;
    let engine = Engine::new(config, SEED).expect("config");
    let mut sim = Sim::with_latency(engine, ACK_MS);
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + DELTA_BYTES).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        sim.push(Input::TextDelta(&text[at..end]));
        at = end;
        sim.wait(GAP_MS);
    }
    sim.push(Input::Finish).run_until_idle();

    let mut out = format!(
        "{title}\n{DELTA_BYTES}-byte deltas {GAP_MS} ms apart, acks after {ACK_MS} ms, \
         seed {SEED}; lengths in {metric}; '␍' is a CR, '·' a trailing space\n"
    );
    let mut seen = Vec::new();
    for (t, action) in &sim.log {
        match action {
            Action::Send(send) => {
                let retry = if seen.contains(&send.send_id) {
                    " (retry)"
                } else {
                    ""
                };
                seen.push(send.send_id);
                let p = &send.payload;
                let delivered = sim
                    .delivered
                    .iter()
                    .find(|(_, s)| s.send_id == send.send_id)
                    .map_or("not delivered".to_owned(), |(d, _)| {
                        format!("delivered {d} ms")
                    });
                let lane = match p.lane {
                    Lane::Answer => String::new(),
                    other => format!(" [{}]", other.name()),
                };
                writeln!(
                    out,
                    "\n{t:>6} ms  {} {} #{}{retry}{lane}  {} units, {} lines, {delivered}",
                    send.kind.name(),
                    send.op.name(),
                    send.send_id.0,
                    metric.len(&p.text),
                    p.text.split('\n').count(),
                )
                .unwrap();
                for media in &p.media {
                    writeln!(out, "          media {media}").unwrap();
                }
                if let Some(target) = &p.reply_to {
                    writeln!(out, "          reply to {target:?}").unwrap();
                }
                for line in p.text.split('\n') {
                    writeln!(out, "          │ {}", visible(line)).unwrap();
                }
            }
            Action::Abort { reason } => {
                writeln!(out, "\n{t:>6} ms  abort {}", reason.name()).unwrap()
            }
            Action::Idle => writeln!(out, "\n{t:>6} ms  idle").unwrap(),
            _ => {}
        }
    }
    for (t, error) in &sim.errors {
        writeln!(out, "\n{t:>6} ms  error {error}").unwrap();
    }
    out
}

/// A line as a reviewer can see it: CRs and trailing spaces marked.
fn visible(line: &str) -> String {
    let trimmed = line.trim_end_matches([' ', '\r']);
    let tail: String = line[trimmed.len()..]
        .chars()
        .map(|c| if c == '\r' { '␍' } else { '·' })
        .collect();
    format!("{}{tail}", trimmed.replace('\r', "␍"))
}

macro_rules! scenario {
    ($name:ident, $title:expr, $config:expr, $text:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), timeline($title, $config, $text));
        }
    };
}

scenario!(
    telegram_code,
    "telegram, code-heavy.md",
    channel("telegram"),
    CODE
);
scenario!(
    telegram_prose,
    "telegram, prose-paragraphs.md",
    channel("telegram"),
    PROSE
);
scenario!(
    discord_code,
    "discord, code-heavy.md",
    channel("discord"),
    CODE
);
scenario!(
    discord_prose,
    "discord, prose-paragraphs.md",
    channel("discord"),
    PROSE
);
scenario!(
    discord_lists,
    "discord, lists-tables.md",
    channel("discord"),
    LISTS
);
scenario!(slack_code, "slack, code-heavy.md", channel("slack"), CODE);
scenario!(
    slack_prose,
    "slack, prose-paragraphs.md",
    channel("slack"),
    PROSE
);
scenario!(
    signal_code,
    "signal, code-heavy.md",
    channel("signal"),
    CODE
);
scenario!(
    signal_prose,
    "signal, prose-paragraphs.md",
    channel("signal"),
    PROSE
);
scenario!(
    whatsapp_code,
    "whatsapp, code-heavy.md",
    channel("whatsapp"),
    CODE
);
scenario!(
    whatsapp_prose,
    "whatsapp, prose-paragraphs.md",
    channel("whatsapp"),
    PROSE
);
scenario!(
    imessage_code,
    "imessage, code-heavy.md",
    channel("imessage"),
    CODE
);
scenario!(
    imessage_prose,
    "imessage, prose-paragraphs.md",
    channel("imessage"),
    PROSE
);
scenario!(
    googlechat_code,
    "googlechat, code-heavy.md",
    channel("googlechat"),
    CODE
);
scenario!(
    googlechat_prose,
    "googlechat, prose-paragraphs.md",
    channel("googlechat"),
    PROSE
);
scenario!(
    generic_code,
    "generic, code-heavy.md",
    channel("generic"),
    CODE
);
scenario!(
    generic_prose,
    "generic, prose-paragraphs.md",
    channel("generic"),
    PROSE
);
scenario!(
    generic_unicode,
    "generic, unicode-mix.md, small blocks",
    small(),
    UNICODE
);
scenario!(
    reasoning_on,
    "telegram, directives-and-thinking.md, reasoning on",
    Config {
        reasoning: ReasoningMode::On,
        ..channel("telegram")
    },
    THINKING
);
scenario!(
    reasoning_stream,
    "telegram, directives-and-thinking.md, reasoning stream",
    Config {
        reasoning: ReasoningMode::Stream,
        ..channel("telegram")
    },
    THINKING
);
scenario!(
    human_delay,
    "generic, prose-paragraphs.md, small blocks, natural human delay",
    Config {
        human_delay: HumanDelay::Natural,
        ..small()
    },
    PROSE
);
