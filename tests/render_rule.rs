//! The rendering rule (SPEC §15, §13 item 10), judged by an independent renderer
//! (`common::render_judge`: pulldown-cmark, never the library's scanner): every message the
//! chat shows, rendered on its own, shows its stretch of the reply as the whole reply renders.
//!
//! Run through the public API: the engine on every channel profile (deltas of 1, 7 and 64
//! bytes and the whole reply at once; the profile's limits, text limits of 300 and 600 and
//! near the smallest accepted, chunk maxima of 300 and 600 under the profile's coalescing),
//! the platform splitter, and live previews. Every engine run is
//! also held to the exact invariants (`common::reconstruct`: each send one span of the reply,
//! nothing lost, nothing twice) and to the message count.
//!
//! The judge's own tests come first: each shows one difference it must see (or one it must
//! allow), on hand-made messages, so the judge cannot quietly accept everything.
//!
//! Cases that fail on today's code are kept, ignored with the missing piece of issue 16
//! named: un-ignore them as the fixes land.

mod common;
mod render_checks;

use std::collections::HashSet;

use common::reconstruct::{Rule, Source, check_answer, seen_sends};
use common::render_judge::{
    Allow, Count, PreviewRule, TableRoom, check_messages, check_preview, render,
};
use replystream::sim::Sim;
use replystream::{
    BreakPreference, ChannelProfile, Config, Engine, Input, Lane, LengthMetric, PlatformSplitter,
    PreviewMode, SendKind, SendOp, SplitConfig, SplitMode,
};

fn texts(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn judge(reply: &str, messages: &[&str]) -> Result<(), String> {
    check_messages(reply, &texts(messages), &Allow::default())
}

fn judge_with_prefix(reply: &str, messages: &[&str]) -> Result<(), String> {
    let allow = Allow {
        prefix: Some("[bot]".into()),
        ..Allow::default()
    };
    check_messages(reply, &texts(messages), &allow)
}

fn rejects(result: Result<(), String>, what: &str) {
    let err = result.expect_err("the judge must see the difference");
    assert!(
        err.contains(what),
        "the report should mention {what:?}: {err}"
    );
}

// ---- the judge's own tests -------------------------------------------------------------

#[test]
fn judge_accepts_cuts_at_paragraphs_and_lines() {
    let reply = "Intro with **bold** and `code`.\n\nSecond paragraph\nwith a line.\n\n- a\n- b";
    judge(reply, &[reply]).unwrap();
    judge(
        reply,
        &[
            "Intro with **bold** and `code`.",
            "Second paragraph",
            "with a line.\n\n- a",
            "- b",
        ],
    )
    .unwrap();
    // A hard cut in the middle of a word is no rendering difference.
    judge("abcdef ghi", &["abc", "def ghi"]).unwrap();
}

#[test]
fn judge_accepts_a_fence_closed_and_reopened_at_a_line_break() {
    let reply = "Run:\n\n```python\na = 1\nb = 2\n\nc = 3\n```\nDone.";
    judge(
        reply,
        &[
            "Run:\n\n```python\na = 1\nb = 2\n```",
            "```python\nc = 3\n```\nDone.",
        ],
    )
    .unwrap();
    // The indentation of code is compared exactly, even at a message's start.
    let reply = "```\nif x:\n    y()\n```";
    rejects(
        judge(reply, &["```\nif x:\n```", "```\ny()\n```"]),
        "message 1",
    );
}

#[test]
fn judge_sees_a_lost_tail_and_an_empty_message() {
    rejects(
        judge("one two three", &["one two"]),
        "goes on after the last message",
    );
    rejects(
        judge("Code:\n```\nx\n```", &["Code:", "```\n```", "```\nx\n```"]),
        "shows nothing",
    );
}

#[test]
fn judge_sees_a_table_cut_between_its_header_and_delimiter_row() {
    let reply = "Plan:\n\n| Item | Cost |\n|---|---|\n| Rail | 300 |\n| Hotel | 900 |";
    judge(reply, &[reply]).unwrap();
    rejects(
        judge(
            reply,
            &[
                "Plan:\n\n| Item | Cost |",
                "|---|---|\n| Rail | 300 |\n| Hotel | 900 |",
            ],
        ),
        "message 0",
    );
}

#[test]
fn judge_allows_a_repeated_header_and_sees_a_lost_one() {
    let reply = "| Item | Cost |\n|---|--:|\n| Rail | 300 |\n| Hotel | 900 |";
    let first = "| Item | Cost |\n|---|--:|\n| Rail | 300 |";
    judge(
        reply,
        &[first, "| Item | Cost |\n|---|--:|\n| Hotel | 900 |"],
    )
    .unwrap();
    // Without the header, the continuation is raw pipes.
    rejects(judge(reply, &[first, "| Hotel | 900 |"]), "message 1");
    // A repeated header must repeat the alignment too.
    rejects(
        judge(
            reply,
            &[first, "| Item | Cost |\n|---|---|\n| Hotel | 900 |"],
        ),
        "message 1",
    );
    // And a header is repeated only where the reply goes on with a body row.
    rejects(
        judge(
            "| A |\n|---|\n| 1 |\n\nAfter.",
            &["| A |\n|---|\n| 1 |", "| A |\n|---|\n\nAfter."],
        ),
        "message 1",
    );
}

#[test]
fn judge_allows_plain_rows_only_where_the_header_cannot_repeat() {
    // Header and delimiter rows of 31 chars: with the first row they need 49, with the
    // second 47.
    let reply =
        "Costs:\n\n| Item | Cost (EUR) |\n|---|--:|\n| Rail pass | 3 |\n| Hotel | 900 |\n\nTotal.";
    let room = |max| Allow {
        table_room: Some(TableRoom {
            max,
            count: Count::Chars,
            max_lines: None,
        }),
        ..Allow::default()
    };
    let plain = texts(&[
        "Costs:\n\n| Item | Cost (EUR) |\n|---|--:|",
        "| Rail pass | 3 |",
        "| Hotel | 900 |\n\nTotal.",
    ]);
    // Too tight for the header and any row: the rows go on as their source text.
    check_messages(reply, &plain, &room(46)).unwrap();
    // With room for the header and the row, the header must be repeated.
    rejects(check_messages(reply, &plain, &room(49)), "message 1");
    rejects(
        check_messages(reply, &plain, &Allow::default()),
        "message 1",
    );
    rejects(check_messages(reply, &plain, &room(48)), "message 2");
    let mixed = texts(&[
        "Costs:\n\n| Item | Cost (EUR) |\n|---|--:|",
        "| Rail pass | 3 |",
        "| Item | Cost (EUR) |\n|---|--:|\n| Hotel | 900 |\n\nTotal.",
    ]);
    check_messages(reply, &mixed, &room(48)).unwrap();
    // Nothing lost, nothing changed: a row left out, a row cut short, a row's text changed.
    let tight = room(20);
    for broken in [
        &[
            "Costs:\n\n| Item | Cost (EUR) |\n|---|--:|",
            "| Hotel | 900 |\n\nTotal.",
        ][..],
        &[
            "Costs:\n\n| Item | Cost (EUR) |\n|---|--:|",
            "pass | 3 |",
            "| Hotel | 900 |\n\nTotal.",
        ],
        &[
            "Costs:\n\n| Item | Cost (EUR) |\n|---|--:|",
            "| Rail pass | 3 |",
            "| Hotel | 90 |\n\nTotal.",
        ],
        &[
            "Costs:\n\n| Item | Cost (EUR) |\n|---|--:|",
            "| Rail pass | 3 |\n| Hotel | 900 |",
            "Total!",
        ],
    ] {
        assert!(
            check_messages(reply, &texts(broken), &tight).is_err(),
            "{broken:?}"
        );
    }
    // A row longer than the room, cut inside (at a space), then the rest of it.
    check_messages(
        reply,
        &texts(&[
            "Costs:\n\n| Item | Cost (EUR) |\n|---|--:|",
            "| Rail",
            "pass | 3 |\n| Hotel | 900 |",
            "Total.",
        ]),
        &tight,
    )
    .unwrap();
    // In a quote, the rows may lose their markers at a message's start.
    let quoted = "> | Item | Cost (EUR) |\n> |---|--:|\n> | Rail pass | 3 |\n> | Hotel | 900 |";
    check_messages(
        quoted,
        &texts(&[
            "> | Item | Cost (EUR) |\n> |---|--:|\n> | Rail pass | 3 |",
            "> | Hotel | 900 |",
        ]),
        &room(40),
    )
    .unwrap();
}

#[test]
fn judge_sees_markup_shown_as_text() {
    // A list marker shown as text, where the reply shows a list item.
    rejects(
        judge(
            "Steps:\n\n1. Install\n2. Run",
            &["Steps:\n\n1. Install", "\\2. Run"],
        ),
        "message 1",
    );
    // A quote marker shown as text.
    rejects(
        judge("> quoted\n\nafter", &["\\> quoted", "after"]),
        "message 0",
    );
    // A line that becomes a list item when a message starts there.
    rejects(
        judge(
            "In the year\n2020. It rained.",
            &["In the year", "2020. It rained."],
        ),
        "message 1",
    );
}

#[test]
fn judge_sees_a_lone_list_marker_at_a_message_end() {
    let reply = "Steps:\n\n- install it\n- run it";
    rejects(
        judge(reply, &["Steps:\n\n- install it\n-", "run it"]),
        "lone list marker",
    );
    judge(reply, &["Steps:\n\n- install it", "- run it"]).unwrap();
}

#[test]
fn judge_allows_a_lost_container_at_a_message_start() {
    let reply = "- first item\n  goes on here\n\n  and has a second paragraph\n- second";
    judge(
        reply,
        &[
            "- first item\n  goes on here",
            "and has a second paragraph\n- second",
        ],
    )
    .unwrap();
    let reply = "> a quote\n> that goes on\n> and on";
    judge(reply, &["> a quote", "> that goes on\n> and on"]).unwrap();
}

#[test]
fn judge_sees_a_fence_in_a_list_item_misread_at_a_message_start() {
    // The defect-2 shape: a fence indented 4 spaces under a `- ` item is a fence; a message
    // that starts at its opening line with the indentation stripped only there shows the
    // fence lines and the code as a paragraph and an open code block.
    let reply = "- Until now, e.g.\n    ```\n    thread 'main' panicked\n    ```\n- next";
    judge(reply, &[reply]).unwrap();
    rejects(
        judge(
            reply,
            &[
                "- Until now, e.g.",
                "```\n    thread 'main' panicked\n    ```\n- next",
            ],
        ),
        "message 1",
    );
    // Reopened de-indented by the content column, it reads as code again.
    judge(
        reply,
        &[
            "- Until now, e.g.",
            "```\nthread 'main' panicked\n```\n- next",
        ],
    )
    .unwrap();
}

#[test]
fn judge_sees_a_link_emphasis_url_or_code_span_cut() {
    let reply = "See [the long link text](https://example.com/a/b) now.";
    rejects(
        judge(
            reply,
            &["See [the long", "link text](https://example.com/a/b) now."],
        ),
        "message 0",
    );
    let reply = "A **bold sentence that goes on** and ends.";
    rejects(
        judge(reply, &["A **bold sentence", "that goes on** and ends."]),
        "message 0",
    );
    // Closed and reopened, the emphasis renders alike.
    judge(
        reply,
        &["A **bold sentence**", "**that goes on** and ends."],
    )
    .unwrap();
    let reply = "Open https://example.com/docs/getting-started/install today.";
    rejects(
        judge(
            reply,
            &[
                "Open https://example.com/docs/getting-",
                "started/install today.",
            ],
        ),
        "message 0",
    );
    judge(
        reply,
        &[
            "Open",
            "https://example.com/docs/getting-started/install today.",
        ],
    )
    .unwrap();
    let reply = "Run `cargo build --release --locked` first.";
    rejects(
        judge(reply, &["Run `cargo build", "--release --locked` first."]),
        "message 0",
    );
    judge(reply, &["Run `cargo build`", "`--release --locked` first."]).unwrap();
}

#[test]
fn judge_allows_a_streamed_close_next_to_the_replys_own_closing_run() {
    // A cut made while `**unclosed` could still close (its paragraph went on): the message
    // closes it and the next reopens it, where the reply leaves it literal. Right after the
    // reply's own closing run (`here**`), the synthetic one makes a run of 4: only its last
    // 2 are the speculative close.
    let reply = "a **unclosed b **bold here** c.";
    let messages = texts(&["a **unclosed b **bold here****", "**c."]);
    let streamed = Allow {
        streamed: true,
        ..Allow::default()
    };
    check_messages(reply, &messages, &streamed).unwrap();
    // Apart from a stream it is a difference.
    rejects(
        check_messages(reply, &messages, &Allow::default()),
        "message 0",
    );
}

#[test]
fn judge_allows_the_prefix_only_as_text_before_the_message() {
    let reply = "```python\nprint(1)\n```";
    judge_with_prefix(reply, &["[bot]\n```python\nprint(1)\n```"]).unwrap();
    rejects(
        judge_with_prefix(reply, &["[bot] ```python\nprint(1)\n```"]),
        "message 0",
    );
    let reply = "1. Install\n2. Run";
    rejects(
        judge_with_prefix(reply, &["[bot] 1. Install\n2. Run"]),
        "message 0",
    );
    judge_with_prefix("Hello there.", &["[bot] Hello there."]).unwrap();
}

#[test]
fn judge_of_previews_holds_the_settled_part_and_optionally_the_healed_tail() {
    let reply = render("Intro **bold words here** done.\n\n```\ncode line\nmore\n```\nAfter.");
    let allow = Allow::default();
    let settled = PreviewRule::Settled;
    let healed = PreviewRule::Healed;
    // The block being written may show raw markup under the settled rule, not the healed.
    let raw_tail = "Intro **bold wor█";
    check_preview(&reply, raw_tail, Some("█"), &allow, settled).unwrap();
    rejects(
        check_preview(&reply, raw_tail, Some("█"), &allow, healed),
        "preview",
    );
    check_preview(&reply, "Intro **bold wor**█", Some("█"), &allow, healed).unwrap();
    // A settled block that differs is a difference under both.
    let broken = "Intro **bold words\n\n```\ncode█\n```";
    rejects(
        check_preview(&reply, broken, Some("█"), &allow, settled),
        "preview",
    );
    // A tail window behind its header.
    check_preview(
        &reply,
        "…\n```\ncode line\nmo█\n```",
        Some("█"),
        &allow,
        healed,
    )
    .unwrap();
}

// ---- runs through the public API -------------------------------------------------------

/// The limits a run uses.
#[derive(Clone, Copy, Debug)]
enum Limits {
    /// The channel profile's.
    Profile,
    /// This text limit (the chunk and coalesce sizes come down with it).
    Text(usize),
    /// The smallest text limit the metric accepts, times this.
    NearSmallest(usize),
    /// This chunk max (chunk min half of it), the profile's text limit: small blocks that
    /// the coalescer merges back into messages (its seams must drop the repairs between
    /// blocks of one message).
    Chunk(usize),
}

const SIZES: [Option<usize>; 4] = [Some(1), Some(7), Some(64), None];

fn channel_config(channel: &str, limits: Limits, prefix: Option<&str>) -> Config {
    let mut c = Config::for_channel(&ChannelProfile::by_name(channel).expect("channel"));
    // Under a limit of its own, the channel posts Markdown: these runs judge the Markdown
    // cut rules (SPEC §15) at small limits, where a rendered format's limit can leave no
    // room for a table's header and one row once laid out as code (the limit then wins, as
    // for a row longer than the limit; `tests/engine_limits.rs` holds rendered formats to
    // their limits at every size).
    if !matches!(limits, Limits::Profile | Limits::Chunk(_)) {
        c.format = replystream::Format::Markdown;
    }
    match limits {
        Limits::Profile => {}
        Limits::Text(n) => c.text_limit = n,
        Limits::NearSmallest(k) => c.text_limit = c.metric.min_limit() * k,
        Limits::Chunk(n) => {
            c.chunk_max = n;
            c.chunk_min = n / 2;
        }
    }
    c.response_prefix = prefix.map(str::to_owned);
    c
}

/// Streams `text` as one assistant message in deltas of `size` bytes (rounded up to a char
/// boundary; `None`: at once), finishes the turn and runs until idle.
fn run_engine(config: Config, text: &str, size: Option<usize>) -> Sim {
    let mut sim = Sim::new(Engine::new(config, 7).expect("valid config"));
    sim.push(Input::MessageStart);
    let size = size.unwrap_or(text.len().max(1));
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        sim.push(Input::TextDelta(&text[at..end]));
        at = end;
    }
    sim.push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    sim
}

/// The answer messages the chat shows.
fn shown(sim: &Sim) -> Vec<String> {
    texts(&sim.chat.lane_texts(Lane::Answer))
}

/// Every check of one engine run: the exact invariants (the prefix taken off first), the
/// message count (one message per send), and the rendering rule.
fn check_engine_run(sim: &Sim, text: &str, prefix: Option<&str>) -> Result<(), String> {
    if !sim.errors.is_empty() {
        return Err(format!("push errors: {:?}", sim.errors));
    }
    if !sim.is_idle() {
        return Err("the turn did not end".into());
    }
    let config = sim.engine.config().clone();
    let delivered: HashSet<_> = sim.delivered.iter().map(|(_, s)| s.send_id).collect();
    let mut log: Vec<_> = sim.sends().into_iter().map(|(_, s)| s).collect();
    let messages = shown(sim);
    let answer_sends: HashSet<_> = log
        .iter()
        .filter(|s| s.payload.lane == Lane::Answer && s.kind != SendKind::Preview)
        .map(|s| s.send_id)
        .collect();
    if config.preview == PreviewMode::Off && answer_sends.len() != messages.len() {
        return Err(format!(
            "{} answer sends but the chat shows {} messages",
            answer_sends.len(),
            messages.len()
        ));
    }
    // Not fragmented: no more than twice the messages the text needs at the limit, plus one
    // (with no timer between deltas, the coalescer flushes only when full).
    let by_lines = config
        .max_lines
        .map_or(0, |cap| text.split('\n').count().div_ceil(cap));
    // The limit counts what is posted (a table laid out as code is longer than its
    // Markdown): what the sends posted, as the platform counts it, needs this many too.
    let posted: usize = log
        .iter()
        .filter(|s| s.payload.lane == Lane::Answer && s.kind != SendKind::Preview)
        .map(|s| match s.format {
            replystream::Format::TelegramHtml => render_checks::read_telegram_html(s.text())
                .map_or(0, |m| config.metric.len(&m.text)),
            _ => config.metric.len(s.text()),
        })
        .sum();
    let needed = config
        .metric
        .len(text)
        .max(posted)
        .div_ceil(config.text_limit)
        .max(by_lines);
    if messages.len() > 2 * needed + 1 {
        return Err(format!(
            "{} messages for a text that needs {needed} at the limit {} and line cap {:?}",
            messages.len(),
            config.text_limit,
            config.max_lines
        ));
    }
    if let Some(p) = prefix {
        for s in &mut log {
            let t = &s.payload.text;
            if let Some(rest) = t.strip_prefix(p) {
                let rest = rest.strip_prefix([' ', '\n']).unwrap_or(rest);
                s.payload.text = rest.to_owned();
            }
        }
    }
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
        all_fences_repairable: true,
    };
    if config.preview == PreviewMode::Off {
        let sends = seen_sends(log.iter(), &delivered);
        check_answer(&[Source::new(text, Vec::new())], &sends, &rule)
            .map_err(|e| format!("exactness: {e}"))?;
    }
    // The chunker cuts blocks at `chunk_max` (within the text limit): a table row that
    // cannot follow its header in a block goes on plainly there, and a message that ends
    // inside a row longer than a block shows it cut; but a message that starts at a row
    // shows the header wherever the message has room for it (README design notes, tables).
    let allow = Allow {
        prefix: prefix.map(str::to_owned),
        table_room: Some(TableRoom {
            max: config.chunk_max.min(config.text_limit),
            count: Count::of(config.metric),
            max_lines: config.max_lines,
        }),
        streamed: true,
        message_room: Some(TableRoom {
            max: config.text_limit,
            count: Count::of(config.metric),
            max_lines: config.max_lines,
        }),
    };
    check_messages(text, &messages, &allow)
}

/// Runs `text` on every channel, delta size and limit setting of `limits`; returns the
/// failures, one line of context and the judge's report each.
fn engine_matrix(text: &str, limits: &[Limits], prefix: Option<&str>) -> Vec<String> {
    let mut failures = Vec::new();
    for channel in ChannelProfile::NAMES {
        for &limit in limits {
            for size in SIZES {
                let config = channel_config(channel, limit, prefix);
                let sim = run_engine(config, text, size);
                if let Err(e) = check_engine_run(&sim, text, prefix) {
                    failures.push(format!("{channel}, {limit:?}, deltas {size:?}: {e}"));
                }
            }
        }
    }
    failures
}

/// The platform splitter over `text` at each limit, in each metric and mode.
fn splitter_matrix(text: &str, limits: &[usize]) -> Vec<String> {
    let mut failures = Vec::new();
    for &limit in limits {
        for metric in [
            LengthMetric::Chars,
            LengthMetric::Utf16,
            LengthMetric::Bytes,
        ] {
            for mode in [SplitMode::Length, SplitMode::Newline] {
                for max_lines in [None, Some(17)] {
                    let config = SplitConfig {
                        limit,
                        metric,
                        mode,
                        max_lines,
                        ..SplitConfig::default()
                    };
                    let pieces: Vec<String> = PlatformSplitter::new(config)
                        .expect("valid config")
                        .split(text)
                        .into_iter()
                        .map(|b| b.text)
                        .collect();
                    if let Some(p) = pieces.iter().find(|p| metric.len(p) > limit) {
                        failures.push(format!("{config:?}: a piece over the limit: {p:?}"));
                    }
                    if let Err(e) = check_messages(text, &pieces, &split_allow(&config)) {
                        failures.push(format!("{config:?}: {e}"));
                    }
                }
            }
        }
    }
    failures
}

/// What the judge allows the splitter under `config`: rows that cannot follow their header
/// within its limit go on plainly.
fn split_allow(config: &SplitConfig) -> Allow {
    Allow {
        table_room: Some(TableRoom {
            max: config.limit,
            count: Count::of(config.metric),
            max_lines: config.max_lines,
        }),
        ..Allow::default()
    }
}

/// Streams `text` with a live preview (partial mode, Telegram) in deltas of `size` bytes,
/// 40 ms apart, and checks every preview text under `rule` and the final messages.
fn preview_run(text: &str, size: usize, rule: PreviewRule) -> Vec<String> {
    preview_run_in(PreviewMode::Partial, text, size, rule)
}

/// [`preview_run`] in preview `mode`.
fn preview_run_in(mode: PreviewMode, text: &str, size: usize, rule: PreviewRule) -> Vec<String> {
    let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
    config.preview = mode;
    let cursor = config.preview_cursor.clone();
    let mut sim = Sim::new(Engine::new(config, 7).expect("valid config"));
    sim.push(Input::MessageStart);
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        sim.push(Input::TextDelta(&text[at..end]));
        at = end;
        sim.wait(40);
    }
    sim.push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    let reply = render(text);
    let mut failures = Vec::new();
    let mut shown_previews = 0;
    for (t, s) in sim.sends() {
        if s.kind != SendKind::Preview || matches!(s.op, SendOp::Delete { .. }) {
            continue;
        }
        shown_previews += 1;
        if let Err(e) = check_preview(
            &reply,
            &s.payload.text,
            cursor.as_deref(),
            &Allow::default(),
            rule,
        ) {
            failures.push(format!("preview at {t} ms: {e}"));
        }
    }
    if let Err(e) = check_messages(text, &shown(&sim), &Allow::default()) {
        failures.push(format!("final messages: {e}"));
    }
    // A reply longer than the first preview's threshold is previewed at least once.
    if shown_previews == 0 && text.len() > 200 {
        failures.push(format!("no preview was shown ({mode:?})"));
    }
    failures
}

/// Fails with the count of failing runs and the first three. With `RENDER_RULE_DUMP=path`
/// every failure is also written to `path.<what>.<count>`, to look past the first ones.
fn assert_none(what: &str, failures: Vec<String>) {
    if failures.is_empty() {
        return;
    }
    if let Ok(path) = std::env::var("RENDER_RULE_DUMP") {
        let _ = std::fs::write(
            format!("{path}.{what}.{}", failures.len()),
            failures.join("\n\n"),
        );
    }
    let shown: Vec<&String> = failures.iter().take(3).collect();
    panic!(
        "{what}: {} failing runs; the first:\n\n{}",
        failures.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

// ---- the replies (the corpus: `tests/data/replies/`) --------------------------------------

fn reply(name: &str) -> String {
    let path = format!("{}/tests/data/replies/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A sample of `tests/data` (outside `replies/`).
fn sample(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every limit setting of the engine runs. `NearSmallest(3)` is 72 chars, 87 UTF-16 units:
/// small, but above every word and every code span of the texts it is used on.
const ENGINE_LIMITS: [Limits; 6] = [
    Limits::Profile,
    Limits::Text(600),
    Limits::Text(300),
    Limits::NearSmallest(3),
    Limits::Chunk(600),
    Limits::Chunk(300),
];

/// The splitter's limits (chars, UTF-16 units and bytes).
const SPLIT_LIMITS: [usize; 4] = [4000, 2000, 600, 300];

// Prose, code (fences of every kind, a fence longer than a message, indented code), emoji
// and CJK: what the chunker has always repaired. These hold today.

const SOLID: [&str; 4] = [
    "prose-paragraphs.md",
    "code-heavy.md",
    "unicode-mix.md",
    "unclosed-fence.md",
];

#[test]
fn engine_prose_code_and_unicode_render_alike_on_every_channel() {
    for name in SOLID {
        assert_none(name, engine_matrix(&sample(name), &ENGINE_LIMITS, None));
    }
}

#[test]
fn splitter_prose_code_and_unicode_render_alike() {
    for name in SOLID {
        assert_none(name, splitter_matrix(&sample(name), &SPLIT_LIMITS));
    }
}

#[test]
fn previews_of_prose_code_and_unicode_show_a_healed_tail() {
    for name in SOLID {
        for size in [7, 64] {
            assert_none(name, preview_run(&sample(name), size, PreviewRule::Healed));
        }
    }
}

// ---- the corpus: tests/data/replies/ ------------------------------------------------------

/// Every reply of the corpus, by file name.
fn corpus_names() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/replies");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("tests/data/replies")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.sort();
    names
}

/// The corpus is what issue 16 asks for: at least 20 replies of 2 to 16 KB, CRLF in some,
/// a table of 3 000+ chars, fences nested in list items at 3 and 4 spaces (and deeper), a
/// quote holding a list and code, long links, autolinks and bare URLs, emoji ZWJ sequences
/// and CJK, `1)` lists and a lazy quote line. Checked here with plain text searches, so the
/// corpus cannot quietly lose what the tests rely on.
#[test]
fn the_corpus_holds_what_the_rule_is_tested_on() {
    let names = corpus_names();
    assert!(names.len() >= 20, "{} replies", names.len());
    let texts: Vec<String> = names.iter().map(|n| reply(n)).collect();
    for (name, text) in names.iter().zip(&texts) {
        assert!(
            (2048..=16384).contains(&text.len()),
            "{name}: {} bytes",
            text.len()
        );
    }
    let any = |what: &str, f: &dyn Fn(&str) -> bool| {
        assert!(texts.iter().any(|t| f(t)), "no reply has {what}");
    };
    any("CRLF line ends", &|t| t.contains("\r\n"));
    any("a table of 3 000+ chars", &|t| {
        t.lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| l.chars().count() + 1)
            .sum::<usize>()
            >= 3000
    });
    any("a fence at 3 spaces", &|t| t.contains("\n   ```"));
    any("a fence at 4 spaces", &|t| t.contains("\n    ```"));
    any("a fence two list levels deep", &|t| {
        t.contains("\n     ```")
    });
    any("a quote holding a list", &|t| {
        t.contains("\n> - ") || t.contains("\n> 1. ")
    });
    any("a quote holding code", &|t| t.contains("\n> ```"));
    any("a lazy quote continuation", &|t| {
        t.split('\n').collect::<Vec<_>>().windows(3).any(|w| {
            w[0].starts_with("> ")
                && !w[1].starts_with('>')
                && !w[1].is_empty()
                && w[2].starts_with("> ")
        })
    });
    any("a `1)` list", &|t| t.contains("\n1) "));
    any("a link with long text", &|t| {
        t.contains("- [") && t.contains("](https://")
    });
    any("an autolink", &|t| t.contains("<https://"));
    any("a bare URL", &|t| t.contains(" https://"));
    any("a www. link", &|t| t.contains(" www."));
    any("a ZWJ sequence", &|t| t.contains('\u{200D}'));
    any("CJK", &|t| t.contains('京'));
    any("strikethrough", &|t| t.contains("~~"));
    any("a ~~~ fence", &|t| t.contains("~~~python"));
    any("a four-backtick fence", &|t| t.contains("````"));
}

/// Where the rule holds today at the profiles' limits (all channels, every delta size): kept
/// green so a regression shows.
#[test]
fn engine_corpus_holds_at_the_profile_limits_where_it_does_today() {
    for name in [
        "api-migration-v1-to-v2.md",
        "database-choice-small-tables.md",
        "family-newsletter-emoji-zwj.md",
        "kyoto-itinerary-cjk-emoji.md",
        "meeting-notes-crlf.md",
        "quotes-with-lists-and-code.md",
        "resources-bare-urls-autolinks.md",
        "review-long-bold-and-code.md",
        "rust-copy-links.md",
        "security-advisory-long-links.md",
        "sourdough-italic-asides.md",
        "strikethrough-and-underscores.md",
    ] {
        assert_none(name, engine_matrix(&reply(name), &[Limits::Profile], None));
    }
    assert_none(
        "lists-tables.md",
        engine_matrix(&sample("lists-tables.md"), &ENGINE_LIMITS[..2], None),
    );
}

/// The engine limits of the per-reply tests: the profile's, 600 and 300 (every structure of
/// the corpus but one link fits 300; `rust-copy-links.md` uses 450 for its 353-char link).
const REPLY_LIMITS: [Limits; 4] = [
    Limits::Profile,
    Limits::Text(600),
    Limits::Text(300),
    Limits::Chunk(300),
];

/// One engine test and one splitter test per reply: all channels, every delta size, the
/// limits above; the splitter at `SPLIT_LIMITS` in three metrics, both modes, with and
/// without a line cap. An `ignore` names what the reply hits first today.
macro_rules! reply_tests {
    ($engine:ident, $splitter:ident, $file:literal
        $(, engine_ignored = $e:literal)? $(, splitter_ignored = $s:literal)?) => {
        #[test]
        $(#[ignore = $e])?
        fn $engine() {
            let limits: &[Limits] = if $file == "rust-copy-links.md" {
                &[
                    Limits::Profile,
                    Limits::Text(600),
                    Limits::Text(450),
                    Limits::Chunk(450),
                ]
            } else {
                &REPLY_LIMITS
            };
            assert_none($file, engine_matrix(&reply($file), limits, None));
        }

        #[test]
        $(#[ignore = $s])?
        fn $splitter() {
            let limits: &[usize] = if $file == "rust-copy-links.md" {
                &[4000, 2000, 600, 450]
            } else {
                &SPLIT_LIMITS
            };
            assert_none($file, splitter_matrix(&reply($file), limits));
        }
    };
}

reply_tests!(
    engine_reply_api_migration,
    splitter_reply_api_migration,
    "api-migration-v1-to-v2.md"
);

reply_tests!(
    engine_reply_cloud_pricing,
    splitter_reply_cloud_pricing,
    "cloud-pricing-3kb-table.md"
);

reply_tests!(
    engine_reply_database_choice,
    splitter_reply_database_choice,
    "database-choice-small-tables.md"
);

reply_tests!(
    engine_reply_family_newsletter,
    splitter_reply_family_newsletter,
    "family-newsletter-emoji-zwj.md"
);

reply_tests!(
    engine_reply_git_rebase,
    splitter_reply_git_rebase,
    "git-rebase-explainer.md"
);

reply_tests!(
    engine_reply_home_server,
    splitter_reply_home_server,
    "home-server-complete-guide.md"
);

reply_tests!(
    engine_reply_kubernetes,
    splitter_reply_kubernetes,
    "kubernetes-troubleshooting-deep-lists.md"
);

reply_tests!(
    engine_reply_kyoto_itinerary,
    splitter_reply_kyoto_itinerary,
    "kyoto-itinerary-cjk-emoji.md"
);

reply_tests!(
    engine_reply_meeting_notes,
    splitter_reply_meeting_notes,
    "meeting-notes-crlf.md"
);

reply_tests!(
    engine_reply_python_debugging,
    splitter_reply_python_debugging,
    "python-debugging-long-code.md"
);

reply_tests!(
    engine_reply_quotes,
    splitter_reply_quotes,
    "quotes-with-lists-and-code.md"
);

reply_tests!(
    engine_reply_resources,
    splitter_reply_resources,
    "resources-bare-urls-autolinks.md"
);

reply_tests!(
    engine_reply_review,
    splitter_reply_review,
    "review-long-bold-and-code.md"
);

reply_tests!(
    engine_reply_rust_copy_links,
    splitter_reply_rust_copy_links,
    "rust-copy-links.md"
);

reply_tests!(
    engine_reply_security_advisory,
    splitter_reply_security_advisory,
    "security-advisory-long-links.md"
);

reply_tests!(
    engine_reply_setup_guide,
    splitter_reply_setup_guide,
    "setup-guide-nested-fences.md"
);

reply_tests!(
    engine_reply_sourdough,
    splitter_reply_sourdough,
    "sourdough-italic-asides.md"
);

reply_tests!(
    engine_reply_strikethrough,
    splitter_reply_strikethrough,
    "strikethrough-and-underscores.md"
);

reply_tests!(
    engine_reply_systemd_guide,
    splitter_reply_systemd_guide,
    "systemd-deploy-nested-guide.md"
);

reply_tests!(
    engine_reply_travel_plan,
    splitter_reply_travel_plan,
    "travel-plan-7kb-table.md"
);

// ---- previews and prefixes ----------------------------------------------------------------

/// Replies with lists, quotes, fences in list items, long links and long emphasis.
fn structured_replies() -> [String; 4] {
    [
        sample("lists-tables.md"),
        reply("setup-guide-nested-fences.md"),
        reply("rust-copy-links.md"),
        reply("review-long-bold-and-code.md"),
    ]
}

/// Every preview of every reply but the long table (below) shows its settled blocks as the
/// reply renders them: Telegram, partial mode, deltas of 64 bytes 40 ms apart.
#[test]
fn previews_of_the_corpus_settle_as_the_reply_renders() {
    for name in corpus_names() {
        if name == "travel-plan-7kb-table.md" {
            continue;
        }
        assert_none(&name, preview_run(&reply(&name), 64, PreviewRule::Settled));
        assert_none(
            &name,
            preview_run_in(PreviewMode::Block, &reply(&name), 64, PreviewRule::Settled),
        );
    }
    for text in structured_replies() {
        assert_none(
            "settled preview",
            preview_run(&text, 7, PreviewRule::Settled),
        );
    }
}

#[test]
fn previews_show_a_healed_tail_on_lists_links_and_emphasis() {
    let texts = structured_replies();
    for text in &texts {
        for size in [7, 64] {
            assert_none(
                "healed preview",
                preview_run(text, size, PreviewRule::Healed),
            );
        }
    }
}

#[test]
fn previews_of_a_long_table_render_as_a_table() {
    let text = reply("travel-plan-7kb-table.md");
    for size in [7, 64] {
        assert_none(
            "travel plan preview",
            preview_run(&text, size, PreviewRule::Settled),
        );
    }
}

/// Replies that start with a block construct, sent with a response prefix.
const BLOCK_STARTS: [&str; 6] = [
    "```python\nprint(1)\n```\n\nThat prints 1.",
    "~~~\nplain tilde fence\n~~~\n\nDone.",
    "1. Install it.\n2. Run it.",
    "| A | B |\n|---|---|\n| 1 | 2 |",
    "> A quote first.\n\nThen prose.",
    "## A heading\n\nThen prose.",
];

#[test]
fn engine_prefix_goes_on_its_own_line_before_a_block() {
    for text in BLOCK_STARTS {
        assert_none(text, engine_matrix(text, &[Limits::Profile], Some("[bot]")));
    }
}

#[test]
fn engine_prefix_before_prose_is_allowed() {
    let text = "Sure, here it is.\n\n```python\nprint(1)\n```";
    assert_none(text, engine_matrix(text, &[Limits::Profile], Some("[bot]")));
}

/// The inputs of OpenClaw's chunker tests (`chunk.test.ts`: the texts and limits, at the
/// limits this library accepts), through the splitter and the engine (generic channel, that
/// text limit): every piece renders as its stretch of the input.
#[test]
fn openclaw_chunker_inputs_render_alike() {
    let fence = "```python\ndef my_function():\n    x = 1\n\n    y = 2\n    return x + y\n```";
    let cases: Vec<(String, usize)> = vec![
        ("Heads up now (Though now I'm curious)ok".into(), 35),
        ("Hello (outer (inner) end) world".into(), 26),
        ("Line one\n\nLine two\n\nLine three".into(), 1600),
        ("a".repeat(100), 60),
        (
            "paragraph one line\n\nparagraph two starts here and continues".into(),
            40,
        ),
        (
            "This is a message that should break nicely near a word boundary.".into(),
            30,
        ),
        (
            format!(
                "{}\n\n```bash\nline1\nline2\n```\n\n{}",
                "p".repeat(60),
                "s".repeat(60)
            ),
            40,
        ),
        (format!("```txt\n{}\n```", "a".repeat(500)), 120),
        (format!("~~~sh\n{}\n~~~", "x".repeat(600)), 140),
        (format!("````md\n{}\n````", "y".repeat(600)), 140),
        (format!("```txt\n{}\n```", "a".repeat(300)), 60),
        (format!("({})", "a".repeat(80)), 24),
        (format!("```txt\n{}```", "line\n".repeat(600)), 80),
        ("```js\nconst a = 1;\nconst b = 2;\n```\nAfter".into(), 1000),
        (fence.into(), 1000),
        (format!("{fence}\n\nAfter"), 1000),
        (format!("```js\n{}```", "const a = 1;\n".repeat(20)), 40),
    ];
    assert_none("OpenClaw chunker inputs", openclaw_cases(&cases));
}

/// OpenClaw's indented-fence case: a fence indented 2 spaces, cut at 160.
#[test]
fn openclaw_indented_fence_renders_alike() {
    let cases = vec![(format!("  ```js\n  {}\n  ```", "z".repeat(600)), 160)];
    assert_none("OpenClaw indented fence", openclaw_cases(&cases));
}

/// Runs each `(text, limit)` through the splitter (both modes) and the engine.
fn openclaw_cases(cases: &[(String, usize)]) -> Vec<String> {
    let mut failures = Vec::new();
    for (text, limit) in cases {
        for mode in [SplitMode::Length, SplitMode::Newline] {
            let config = SplitConfig {
                limit: *limit,
                metric: LengthMetric::Chars,
                mode,
                max_lines: None,
                ..SplitConfig::default()
            };
            let pieces: Vec<String> = PlatformSplitter::new(config)
                .expect("valid config")
                .split(text)
                .into_iter()
                .map(|b| b.text)
                .collect();
            if let Err(e) = check_messages(text, &pieces, &Allow::default()) {
                failures.push(format!("splitter {config:?} on {text:?}: {e}"));
            }
        }
        for size in SIZES {
            let sim = run_engine(
                channel_config("generic", Limits::Text(*limit), None),
                text,
                size,
            );
            if let Err(e) = check_engine_run(&sim, text, None) {
                failures.push(format!("engine, limit {limit}, deltas {size:?}: {e}"));
            }
        }
    }
    failures
}
