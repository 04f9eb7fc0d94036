//! Every send carries the text to post in the channel's format and the Markdown it came
//! from (SPEC §16): block sends, finals, reasoning (Telegram: an expandable quote) and
//! preview creates and edits (cursor after the rendered text, outside any tag), judged by
//! the Telegram HTML reader of the render tests.

mod render_checks;

use render_checks::read_telegram_html;
use replystream::sim::{Chat, Platform, Sim};
use replystream::{
    ChannelProfile, Config, Engine, Format, Input, PreviewMode, ReasoningMode, SendKind,
    SendRequest, TableMode,
};

const REPLY: &str = "## Plan\n\nUse **tokio** & `async` <now>.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n\
                     - [docs](https://tokio.rs)\n- done\n";

fn run(config: Config, text: &str) -> Vec<SendRequest> {
    run_paced(config, text, 10)
}

/// Streams `text` to a chat strict like the channel's platform (see `sim::Platform`),
/// which must refuse nothing.
fn run_paced(config: Config, text: &str, gap_ms: u64) -> Vec<SendRequest> {
    let mut sim = Sim::new(Engine::new(config.clone(), 1).expect("valid config"));
    sim.chat = Chat::strict(Platform::for_channel(config.channel));
    sim.chat.limit = Some((config.text_limit.max(config.preview_limit), config.metric));
    sim.stream(text, 7, gap_ms)
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(
        sim.chat.counts.refused, 0,
        "{:?}: {text:?}",
        sim.chat.last_refusal
    );
    sim.sends().into_iter().map(|(_, s)| s).collect()
}

#[test]
fn telegram_sends_are_html_telegram_accepts() {
    let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
    config.chunk_min = 20;
    config.chunk_max = 60;
    config.coalesce_idle_ms = 0;
    let sends = run(config, REPLY);
    let mut markdown = String::new();
    for send in &sends {
        assert_eq!(send.format, Format::TelegramHtml);
        assert_eq!(send.markdown(), send.payload.text);
        let shown =
            read_telegram_html(send.text()).unwrap_or_else(|e| panic!("{e}: {:?}", send.text()));
        assert!(
            !shown.text.contains("**") && !shown.text.contains('`'),
            "{:?}",
            shown.text
        );
        markdown.push_str(send.markdown());
    }
    let all: String = sends.iter().map(|s| s.text()).collect();
    assert!(
        all.contains("<b>tokio</b> &amp; <code>async</code> &lt;now&gt;."),
        "{all}"
    );
    assert!(all.contains("<pre>a | b\n--|--\n1 | 2</pre>"), "{all}");
    assert!(
        all.contains("• <a href=\"https://tokio.rs\">docs</a>\n• done"),
        "{all}"
    );
}

#[test]
fn reasoning_on_telegram_is_an_expandable_quote_and_entities_match() {
    let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
    config.reasoning = ReasoningMode::On;
    config.format = Format::TelegramEntities;
    let sends = run(config, "<think>Check **both** sides.</think>Answer: *yes*.");
    let reasoning: Vec<_> = sends
        .iter()
        .filter(|s| s.payload.lane == replystream::Lane::Reasoning)
        .collect();
    assert_eq!(reasoning.len(), 1, "{sends:#?}");
    assert_eq!(
        reasoning[0].markdown(),
        "Reasoning:\n_Check **both** sides._"
    );
    assert_eq!(reasoning[0].text(), "Reasoning:\nCheck both sides.");
    let kinds: Vec<_> = reasoning[0]
        .entities()
        .iter()
        .map(|e| (e.kind.name(), e.offset, e.length))
        .collect();
    assert_eq!(
        kinds,
        [
            ("expandable_blockquote", 0, 28),
            ("italic", 11, 17),
            ("bold", 17, 4)
        ]
    );
    let answer = sends
        .iter()
        .find(|s| s.payload.lane == replystream::Lane::Answer)
        .unwrap();
    assert_eq!(answer.text(), "Answer: yes.");
    assert_eq!(answer.entities()[0].kind.name(), "italic");
}

#[test]
fn preview_edits_are_rendered_with_the_cursor_outside_any_tag() {
    let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
    config.preview = PreviewMode::Partial;
    let text =
        "Some **bold** words to start the preview off.\n\n```rust\nfn main() { 1 < 2 }\n```\nend";
    let sends = run_paced(config, text, 200);
    let previews: Vec<_> = sends
        .iter()
        .filter(|s| s.kind == SendKind::Preview && !s.text().is_empty())
        .collect();
    let texts: Vec<_> = previews.iter().map(|p| (p.markdown(), p.text())).collect();
    assert!(previews.len() >= 2, "{texts:#?}");
    for p in &previews {
        let html = p.text();
        read_telegram_html(html.trim_end_matches('█')).unwrap_or_else(|e| panic!("{e}: {html:?}"));
        if p.markdown().contains('█') {
            assert!(
                html.ends_with('█') && !html[..html.len() - '█'.len_utf8()].contains('█'),
                "{html:?}"
            );
        }
    }
    assert!(
        previews
            .iter()
            .any(|p| p.text().contains("<pre><code class=\"language-rust\">")),
        "{previews:#?}"
    );
}

#[test]
fn markdown_sends_are_the_markdown_and_discord_tables_are_code() {
    let sends = run(Config::for_channel(&ChannelProfile::GENERIC), REPLY);
    for s in &sends {
        assert_eq!(s.format, Format::Markdown);
        assert!(s.rendered.is_none());
        assert_eq!(s.text(), s.markdown());
    }
    let mut config = Config::for_channel(&ChannelProfile::DISCORD);
    config.table_mode = Some(TableMode::Bullets);
    let sends = run(config, "| a | b |\n|---|---|\n| 1 | 2 |\n\n@everyone look");
    let all: String = sends.iter().map(|s| s.text()).collect();
    assert!(all.contains("- a: 1; b: 2"), "{all}");
    assert!(all.contains("@\u{200B}everyone look"), "{all}");
}

mod props {
    use super::*;
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "word ",
        "日本語",
        "👨‍👩‍👧",
        " ",
        "\n",
        "\n\n",
        "**",
        "_",
        "~~",
        "`",
        "```",
        "```py\n",
        "[a](https://x.io)",
        "<",
        "&",
        "| a | b |\n|---|---|\n| 1 | 2 |\n",
        "- ",
        "1. ",
        "> ",
        "# ",
        "@everyone",
        "<think>hm **x**</think>",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Whatever the model writes and wherever the engine cuts it (small limits, reopened
        /// fences, previews), each Telegram send is HTML Telegram accepts, each entities send
        /// has entities within its text, and each Slack send is escaped.
        #[test]
        fn every_send_is_valid_in_its_format(
            parts in prop::collection::vec(prop::sample::select(PIECES), 1..80),
            preview in any::<bool>(),
        ) {
            let text = parts.concat();
            for (profile, format) in [
                (ChannelProfile::TELEGRAM, Format::TelegramHtml),
                (ChannelProfile::TELEGRAM, Format::TelegramEntities),
                (ChannelProfile::SLACK, Format::SlackMrkdwn),
            ] {
                let mut config = Config::for_channel(&profile);
                config.format = format;
                // Slack's escapes grow a piece up to ten times (`&` in a bare URL is
                // `&amp;` twice): the smallest Slack limit accepted is 93 characters.
                config.text_limit = if format == Format::SlackMrkdwn { 100 } else { 80 };
                config.preview_limit = 120;
                config.chunk_min = 20;
                config.chunk_max = 60;
                config.reasoning = ReasoningMode::Stream;
                if preview {
                    config.preview = PreviewMode::Partial;
                }
                let limit = |send: &SendRequest| match send.kind {
                    SendKind::Preview => config.preview_limit,
                    _ => config.text_limit,
                };
                for send in run_paced(config.clone(), &text, 150) {
                    let shown = send.text();
                    // What the platform counts toward its limit.
                    let counted = match format {
                        Format::TelegramHtml => {
                            let html = shown.strip_suffix('█').unwrap_or(shown);
                            let read = read_telegram_html(html);
                            prop_assert!(read.is_ok(), "{:?} -> {:?}", send.markdown(), shown);
                            let cursor = shown.len() - html.len();
                            read.map_or(0, |m| m.text.encode_utf16().count()) + usize::from(cursor > 0)
                        }
                        Format::TelegramEntities => {
                            let units = shown.encode_utf16().count();
                            for e in send.entities() {
                                prop_assert!(e.length > 0 && e.offset + e.length <= units, "{:?}", send);
                            }
                            units
                        }
                        _ => {
                            let bare = shown.replace("&amp;", "").replace("&lt;", "").replace("&gt;", "");
                            prop_assert!(!bare.contains('&'), "{:?}", shown);
                            shown.chars().count()
                        }
                    };
                    prop_assert!(
                        counted <= limit(&send),
                        "{counted} > {}: {:?} -> {:?}", limit(&send), send.markdown(), shown
                    );
                }
            }
        }
    }
}

/// SPEC §16 captions: on Telegram (caption limit 1024) a long paragraph before a `MEDIA:`
/// line goes as its own message before the media; a short one stays the caption.
#[test]
fn captions_over_the_caption_limit_go_first_as_their_own_message() {
    let long = "word ".repeat(490) + "end.";
    let text = format!("{long}\nMEDIA: https://example.com/chart.png\nAfter.");
    let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
    config.chunk_min = 3000;
    config.chunk_max = 3500;
    let sends = run(config, &text);
    let shown: Vec<_> = sends
        .iter()
        .map(|s| (s.markdown().len(), s.payload.media.len()))
        .collect();
    assert_eq!(
        shown,
        [(long.len(), 0), (0, 1), ("After.".len(), 0)],
        "{shown:?}"
    );
    assert_eq!(sends[0].markdown(), long);
    // Whatever the chunking, no caption is over the limit and no word is lost.
    let sends = run(Config::for_channel(&ChannelProfile::TELEGRAM), &text);
    let words: usize = sends
        .iter()
        .map(|s| s.markdown().matches("word").count())
        .sum();
    assert_eq!(words, 490);
    for s in sends.iter().filter(|s| !s.payload.media.is_empty()) {
        assert!(s.markdown().encode_utf16().count() <= 1024, "{s:?}");
    }

    // A reply target holds for both: the text and the media that followed it.
    let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
    config.chunk_min = 3000;
    config.chunk_max = 3500;
    let sends = run(config, &format!("[[reply_to_current]]{text}"));
    assert_eq!(sends.len(), 3, "{sends:#?}");
    assert_eq!(sends[1].payload.media.len(), 1, "{sends:#?}");
    for s in &sends {
        assert_eq!(
            s.payload.reply_to,
            Some(replystream::ReplyTarget::Current),
            "{s:?}"
        );
    }

    let short = "A chart.\nMEDIA: https://example.com/chart.png";
    let sends = run(Config::for_channel(&ChannelProfile::TELEGRAM), short);
    assert_eq!(sends.len(), 1, "{sends:#?}");
    assert_eq!(
        (sends[0].markdown(), sends[0].payload.media.len()),
        ("A chart.", 1)
    );

    // Without a caption limit (Discord) the long text stays the caption.
    let sends = run(Config::for_channel(&ChannelProfile::SLACK), &text);
    assert!(
        sends
            .iter()
            .any(|s| s.payload.media.len() == 1 && s.markdown() == long),
        "{sends:#?}"
    );
}
