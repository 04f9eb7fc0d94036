//! Limits on what is posted (SPEC §16): on every channel profile, every send the engine
//! emits (block sends, tool results, finals, split pieces, reasoning, captions, preview
//! creates and edits) is within its limit counted as the platform counts it: Telegram the
//! visible text of the HTML (read here with the test's own Telegram reader) in UTF-16
//! units, every other platform what is posted, in the channel's metric. The corpus and hard
//! inputs (`&<>` heavy text, tables wider than the limit, many links, CJK and ZWJ emoji,
//! rules) go through block streaming, finals only, previews and reasoning.
//!
//! `cargo test --test engine_limits -- --nocapture` prints the largest send per profile.

mod common;
mod render_checks;

use common::reconstruct::units;
use render_checks::read_telegram_html;
use replystream::sim::{Chat, Platform, Sim};
use replystream::{
    ChannelProfile, Config, Engine, Format, Input, LengthMetric, Payload, PlatformSplitter,
    PreviewMode, ReasoningMode, SendKind, SendRequest, TableMode,
};

/// The sample replies of the corpus.
const CORPUS: &[&str] = &[
    include_str!("data/code-heavy.md"),
    include_str!("data/formatted-reply.md"),
    include_str!("data/lists-tables.md"),
    include_str!("data/no-breaks.md"),
    include_str!("data/node-events.md"),
    include_str!("data/openclaw-streaming-notes.md"),
    include_str!("data/prose-paragraphs.md"),
    include_str!("data/unicode-mix.md"),
    include_str!("data/replies/cloud-pricing-3kb-table.md"),
    include_str!("data/replies/family-newsletter-emoji-zwj.md"),
    include_str!("data/replies/home-server-complete-guide.md"),
    include_str!("data/replies/kyoto-itinerary-cjk-emoji.md"),
    include_str!("data/replies/kubernetes-troubleshooting-deep-lists.md"),
    include_str!("data/replies/meeting-notes-crlf.md"),
];

/// Replies that rendering grows the most.
fn hard_inputs() -> Vec<String> {
    let mut out = Vec::new();
    // Escapes: Slack posts `&amp;` `&lt;` `&gt;`.
    out.push("Tom & Jerry <3 a>b && c << d >> e & f.\n".repeat(300));
    out.push(format!("{}\n", "&".repeat(9000)));
    // A table wider than the limit, laid out with padding in `code` mode; short cells
    // next to long ones grow the most.
    let mut table = String::from("| k | description | n |\n|---|---|---|\n");
    for i in 0..260 {
        let long = if i % 7 == 0 {
            "x".repeat(40)
        } else {
            "y".into()
        };
        table.push_str(&format!("| {i} | {long} | {} |\n", i * 3));
    }
    out.push(format!("Intro.\n\n{table}\nOutro & done."));
    // Links: `plain` and WhatsApp post `text (url)`, Slack `<url|text>`, bare URLs twice.
    let mut links = String::new();
    for i in 0..400 {
        links.push_str(&format!(
            "See [doc {i}](https://example.com/a?b={i}&c=<{i}>) and https://x.io/p?q={i}&r=1 "
        ));
        if i % 9 == 8 {
            links.push_str("\n\n");
        }
    }
    out.push(links);
    // CJK and ZWJ emoji (UTF-16 surrogates count 2), thematic breaks and list numbers.
    let mut mixed = String::new();
    for i in 0..300 {
        mixed.push_str(&format!(
            "日本語の文です。👩‍👩‍👧‍👦 & 한국어 <ok>\n\n---\n\n1. item {i}\n1. next 🇯🇵\n\n"
        ));
    }
    out.push(mixed);
    out
}

/// How a run is set up, on top of the channel profile.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// Block streaming (the profile's defaults).
    Blocks,
    /// No block streaming: the reply goes as finals, split to the limit.
    Finals,
    /// A live preview, then the final.
    Preview,
    /// Reasoning streamed on its own lane, then the answer.
    Reasoning,
    /// Reasoning shown at the top of a live preview, then delivered on its own lane.
    PreviewReasoning,
    /// The answer before a `MEDIA:` line: a caption.
    Caption,
    /// The reply as a host tool result.
    ToolResult,
}

const MODES: [Mode; 7] = [
    Mode::Blocks,
    Mode::Finals,
    Mode::Preview,
    Mode::Reasoning,
    Mode::PreviewReasoning,
    Mode::Caption,
    Mode::ToolResult,
];

/// The length Telegram, Slack, Discord, WhatsApp or a plain-text chat counts for `send`:
/// Telegram the text after entity parsing in UTF-16 units (refused when the HTML does not
/// parse), every other platform the posted text in the channel's metric.
fn posted(send: &SendRequest, metric: LengthMetric) -> Result<usize, String> {
    match send.format {
        Format::TelegramHtml => read_telegram_html(send.text())
            .map(|m| m.text.encode_utf16().count())
            .map_err(|e| format!("can't parse entities: {e}: {:?}", send.text())),
        Format::TelegramEntities => Ok(send.text().encode_utf16().count()),
        _ => Ok(units(metric, send.text())),
    }
}

/// The limit `send` must be within.
fn limit_of(send: &SendRequest, config: &Config) -> usize {
    if send.kind == SendKind::Preview {
        return config.preview_limit;
    }
    match config.caption_limit {
        Some(c) if !send.payload.media.is_empty() && !send.payload.text.is_empty() => {
            c.min(config.text_limit)
        }
        _ => config.text_limit,
    }
}

fn configure(profile: &ChannelProfile, mode: Mode) -> Config {
    let mut c = Config::for_channel(profile);
    c.coalesce_idle_ms = 0;
    match mode {
        Mode::Finals => c.block_streaming = false,
        Mode::Preview => c.preview = PreviewMode::Partial,
        Mode::Reasoning => c.reasoning = ReasoningMode::Stream,
        Mode::PreviewReasoning => {
            c.preview = PreviewMode::Partial;
            c.reasoning = ReasoningMode::Stream;
        }
        _ => {}
    }
    c
}

/// Runs `text` through `config` and returns every send.
fn run(config: &Config, mode: Mode, text: &str) -> Vec<SendRequest> {
    let mut sim = Sim::new(Engine::new(config.clone(), 3).expect("valid config"));
    // A chat strict like the platform must accept every send.
    sim.chat = Chat::strict(Platform::for_channel(config.channel));
    match mode {
        Mode::Reasoning | Mode::PreviewReasoning => {
            sim.push(Input::MessageStart);
            let mut at = 0;
            while at < text.len() {
                let mut end = (at + 97).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                sim.push(Input::ThinkingDelta(&text[at..end])).wait(5);
                at = end;
            }
            sim.push(Input::ThinkingEnd);
            sim.stream("Answer.", 3, 5);
            sim.push(Input::MessageEnd(None));
        }
        Mode::Caption => {
            let with_media = format!("{}\nMEDIA:https://example.com/a.png\n", text.trim_end());
            sim.stream(&with_media, 61, 5);
        }
        Mode::ToolResult => {
            sim.push(Input::ToolResult(Payload::text(text)));
        }
        _ => {
            sim.stream(text, 61, 5);
        }
    }
    sim.push(Input::Finish).run_until_idle();
    assert_eq!(
        sim.chat.counts.refused, 0,
        "{} {mode:?}: {:?}",
        config.channel, sim.chat.last_refusal
    );
    sim.sends().into_iter().map(|(_, s)| s).collect()
}

/// The largest send seen: posted units, its limit, what it was.
#[derive(Default)]
struct Largest {
    units: usize,
    limit: usize,
    what: String,
}

/// Every send of every corpus reply and hard input, on `profile` in every mode: `Err`
/// lists the sends over their limit (or refused). Prints the largest send of the corpus
/// and of the hard inputs, relative to its limit.
fn check_profile(profile: &ChannelProfile, table_mode: Option<TableMode>) -> Result<(), String> {
    // The corpus replies, then the hard inputs.
    let mut largest = [Largest::default(), Largest::default()];
    let mut failures = Vec::new();
    let hard = hard_inputs();
    let texts = CORPUS
        .iter()
        .copied()
        .chain(hard.iter().map(String::as_str));
    for (i, text) in texts.enumerate() {
        for mode in MODES {
            let mut config = configure(profile, mode);
            config.table_mode = table_mode;
            let metric = config.metric;
            for send in run(&config, mode, text) {
                let limit = limit_of(&send, &config);
                let n = match posted(&send, metric) {
                    Ok(n) => n,
                    Err(e) => {
                        failures.push(format!("text {i} {mode:?}: {e}"));
                        continue;
                    }
                };
                let largest = &mut largest[usize::from(i >= CORPUS.len())];
                if n * largest.limit.max(1) > largest.units * limit {
                    *largest = Largest {
                        units: n,
                        limit,
                        what: format!("text {i} {mode:?} {:?}", send.kind),
                    };
                }
                if n > limit {
                    failures.push(format!("text {i} {mode:?} {:?}: {n} > {limit}", send.kind));
                }
            }
        }
    }
    let [corpus, hard] = &largest;
    println!(
        "{:<10} {:<17} table {:<7} corpus {} / {} ({}), hard inputs {} / {} ({})",
        profile.name,
        Config::for_channel(profile).format.name(),
        table_mode.map_or("default", |m| m.name()),
        corpus.units,
        corpus.limit,
        corpus.what,
        hard.units,
        hard.limit,
        hard.what
    );
    if failures.is_empty() {
        Ok(())
    } else {
        failures.truncate(12);
        Err(failures.join("\n"))
    }
}

#[test]
fn every_send_fits_as_the_platform_counts_it_on_every_profile() {
    let mut errors = Vec::new();
    for profile in ChannelProfile::ALL {
        if let Err(e) = check_profile(&profile, None) {
            errors.push(format!("{}:\n{e}", profile.name));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
}

#[test]
fn every_table_mode_fits_on_the_rendered_profiles() {
    let mut errors = Vec::new();
    for name in ["telegram", "slack", "discord", "whatsapp", "signal"] {
        let profile = ChannelProfile::by_name(name).expect("profile");
        for mode in [TableMode::Bullets, TableMode::Off] {
            if let Err(e) = check_profile(&profile, Some(mode)) {
                errors.push(format!("{name} {}:\n{e}", mode.name()));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
}

/// Pieces of replies that rendering grows or that are hard to cut: escapes, links, bare
/// URLs, tables, rules, list numbers, code, CJK, ZWJ emoji and flags (UTF-16 surrogates).
const PIECES: &[&str] = &[
    "word ",
    "Tom & Jerry ",
    "a<3 ",
    "x > y ",
    "&&& ",
    "日本語の文。",
    "👩‍👩‍👧‍👦",
    "🇯🇵 ",
    "e\u{301} ",
    "[docs](https://example.com/a?b=1&c=2) ",
    "https://x.io/p?q=1&r=<2> ",
    "**bold** ",
    "_it_ ",
    "`a & b` ",
    ". ",
    "\n",
    "\n\n",
    "\n\n---\n\n",
    "\n\n1. one\n1. two\n\n",
    "\n\n- item & more\n- next\n\n",
    "\n\n| k | v |\n|---|---|\n| a | b & c |\n| long cell here | 1 |\n\n",
    "\n\n```\nlet a = 1 < 2 && b;\n```\n\n",
    "\n\n> quoted <text>\n\n",
];

/// The smallest text limit accepted for `format` in `metric`, as documented (README,
/// "Limits"): the Markdown floor (a fence closed and reopened around the widest cluster),
/// and room for a piece planned with a bare fence around one char (8 units and the widest
/// char), grown as much as the format grows text (Slack 10 times, other rendered formats 4),
/// plus a link's `<|>`.
fn smallest_accepted(format: Format, metric: LengthMetric) -> usize {
    let (markdown, widest_char) = match metric {
        LengthMetric::Bytes => (49, 4),
        LengthMetric::Utf16 => (29, 2),
        LengthMetric::Chars => (24, 1),
        _ => (15, 1),
    };
    let growth = match format {
        Format::Markdown => return markdown,
        Format::SlackMrkdwn => 10,
        _ => 4,
    };
    (growth * (8 + widest_char) + 3).max(markdown)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 96, failure_persistence: None, ..Default::default() })]

    /// Split-invariance with rendering: the finals of a reply are exactly the pieces the
    /// public splitter cuts from it with the engine's own split settings (format included),
    /// whatever the limit (down to the smallest accepted), table mode and profile; and
    /// every piece, posted, fits.
    #[test]
    fn finals_are_the_splitters_pieces_and_fit(
        parts in proptest::collection::vec(proptest::sample::select(PIECES), 1..300),
        profile in 0..ChannelProfile::ALL.len(),
        limit in proptest::option::of(20usize..700),
        table in 0..3usize,
    ) {
        let text = parts.concat();
        let profile = ChannelProfile::ALL[profile];
        let mut config = Config::for_channel(&profile);
        config.block_streaming = false;
        config.table_mode = [None, Some(TableMode::Bullets), Some(TableMode::Off)][table];
        if let Some(limit) = limit {
            config.text_limit = limit;
        }
        let Ok(engine) = Engine::new(config.clone(), 1) else {
            proptest::prop_assert!(
                config.text_limit < smallest_accepted(config.format, config.metric),
                "refused: {config:?}"
            );
            return Ok(());
        };
        proptest::prop_assert!(config.text_limit >= smallest_accepted(config.format, config.metric));
        let split = config.clone().validate().expect("accepted").splitter();
        proptest::prop_assert_eq!(split.format, config.format);
        let want: Vec<String> = PlatformSplitter::new(split)
            .expect("the engine's split settings")
            .split(&text)
            .into_iter()
            .map(|piece| piece.text)
            .collect();
        let mut sim = Sim::new(engine);
        sim.stream(&text, 50, 3).push(Input::Finish).run_until_idle();
        let sends: Vec<SendRequest> = sim.sends().into_iter().map(|(_, s)| s).collect();
        let got: Vec<String> = sends.iter().map(|s| s.markdown().to_owned()).collect();
        proptest::prop_assert_eq!(&got, &want, "{:?}", config);
        for send in &sends {
            let n = posted(send, config.metric).map_err(proptest::test_runner::TestCaseError::fail)?;
            proptest::prop_assert!(n <= config.text_limit, "{} > {}: {:?}", n, config.text_limit, send.text());
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, failure_persistence: None, ..Default::default() })]

    /// The public splitter with a format: every piece, rendered, is within the limit as the
    /// platform counts it (Telegram read with the tests' HTML reader), in every format and
    /// table mode, down to the smallest accepted limit; the pieces keep their fences
    /// balanced, cover the text in order, and are never empty.
    #[test]
    fn split_pieces_fit_rendered_in_every_format(
        parts in proptest::collection::vec(proptest::sample::select(PIECES), 1..200),
        format in 0..Format::ALL.len(),
        table in 0..3usize,
        metric in proptest::sample::select(vec![LengthMetric::Chars, LengthMetric::Utf16, LengthMetric::Bytes]),
        extra in 0usize..400,
    ) {
        let text = parts.concat();
        let format = Format::ALL[format];
        let render = replystream::RenderOptions {
            table_mode: [None, Some(TableMode::Bullets), Some(TableMode::Off)][table],
            ..Default::default()
        };
        let limit = smallest_accepted(format, metric) + extra;
        let config = replystream::SplitConfig {
            limit,
            metric,
            format,
            render,
            ..Default::default()
        };
        let below = replystream::SplitConfig { limit: limit - extra - 1, ..config };
        proptest::prop_assert!(PlatformSplitter::new(below).is_err(), "{below:?} accepted");
        let pieces = PlatformSplitter::new(config).expect("accepted").split(&text);
        let mut covered = 0;
        for piece in &pieces {
            proptest::prop_assert!(!piece.text.trim().is_empty());
            proptest::prop_assert!(piece.source.start >= covered, "out of order");
            proptest::prop_assert!(
                text[covered..piece.source.start].trim().is_empty(),
                "text lost before {:?}", piece.source
            );
            covered = piece.source.end;
            proptest::prop_assert!(common::reconstruct::balanced(&piece.text), "{:?}", piece.text);
            let posted = replystream::render(&piece.text, format, &render);
            // Telegram counts the text after entity parsing (read here), in the limit's
            // metric; the others what is posted.
            let n = match format {
                Format::TelegramHtml => units(
                    metric,
                    &read_telegram_html(&posted.text)
                        .map_err(proptest::test_runner::TestCaseError::fail)?
                        .text,
                ),
                _ => units(metric, &posted.text),
            };
            proptest::prop_assert!(n <= limit, "{n} > {limit}: {:?} -> {:?}", piece.text, posted.text);
        }
        proptest::prop_assert!(text[covered..].trim().is_empty(), "text lost at the end");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 96, failure_persistence: None, ..Default::default() })]

    /// Streamed blocks with every break preference and chunk mode, chunk sizes and limits
    /// down to the smallest accepted, on every profile: a chat strict like the platform
    /// refuses nothing, and every send (previews too) is within its limit as posted.
    #[test]
    fn streamed_blocks_fit_with_every_break_preference(
        parts in proptest::collection::vec(proptest::sample::select(PIECES), 1..200),
        profile in 0..ChannelProfile::ALL.len(),
        preference in 0..3usize,
        newline_mode in proptest::bool::ANY,
        chunk in (10usize..400, 0usize..800),
        limit in proptest::option::of(40usize..900),
        delta in 1usize..90,
        preview in proptest::bool::weighted(0.2),
    ) {
        let text = parts.concat();
        let profile = ChannelProfile::ALL[profile];
        let mut config = Config::for_channel(&profile);
        config.break_preference = [
            replystream::BreakPreference::Paragraph,
            replystream::BreakPreference::Newline,
            replystream::BreakPreference::Sentence,
        ][preference];
        if newline_mode {
            config.chunk_mode = replystream::ChunkMode::Newline;
        }
        config.chunk_min = chunk.0;
        config.chunk_max = chunk.0 + chunk.1;
        config.coalesce_idle_ms = 0;
        if let Some(limit) = limit {
            config.text_limit = limit;
        }
        if preview {
            config.preview = PreviewMode::Partial;
        }
        let Ok(engine) = Engine::new(config.clone(), 5) else {
            proptest::prop_assert!(
                config.text_limit < smallest_accepted(config.format, config.metric),
                "refused: {config:?}"
            );
            return Ok(());
        };
        let mut sim = Sim::new(engine);
        sim.chat = Chat::strict(Platform::for_channel(config.channel));
        sim.stream(&text, delta, 7).push(Input::Finish).run_until_idle();
        proptest::prop_assert_eq!(sim.chat.counts.refused, 0, "{:?}", sim.chat.last_refusal);
        for (_, send) in sim.sends() {
            let n = posted(&send, config.metric).map_err(proptest::test_runner::TestCaseError::fail)?;
            let limit = limit_of(&send, &config);
            proptest::prop_assert!(n <= limit, "{} > {}: {:?}", n, limit, send.text());
        }
    }
}
