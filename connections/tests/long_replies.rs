//! A long reply that rendering grows (a table laid out as code, many links, `&` and `<`
//! heavy text) through `PlatformSink` to each fake platform: every message is within the
//! platform's limit as the platform counts it, none is refused, and the reply arrives whole
//! and in order. Before limits were counted on the rendered text, the fakes refused the
//! table's Telegram message (over 4096 UTF-16 units after entity parsing) and Discord's
//! (over 2000 characters), and Slack's messages ran to several times the 4000 characters of
//! the profile.
#![allow(clippy::disallowed_methods)] // real servers, real time

mod fake;

use std::time::Duration;

use fake::discord::FakeDiscord;
use fake::slack::FakeSlack;
use fake::stream_words;
use fake::telegram::FakeTelegram;
use replystream::driver::{Driver, DriverOptions};
use replystream::{ChannelProfile, Config};
use replystream_connections::HttpOptions;
use replystream_connections::discord::Discord;
use replystream_connections::sink::PlatformSink;
use replystream_connections::slack::Slack;
use replystream_connections::telegram::Telegram;

const PARAGRAPHS: usize = 60;
const ROWS: usize = 120;

/// The reply: paragraphs marked `P000`… with links, bare URLs and escapes, a wide table with
/// rows marked `R000`…, more paragraphs.
fn reply() -> String {
    let mut out = String::new();
    let paragraph = |i: usize, out: &mut String| {
        out.push_str(&format!(
            "P{i:03}: Tom & Jerry <3 a>b && c << d, see [docs {i}](https://example.com/d?i={i}&x=1) \
             and https://x.io/{i}?a=1&b=2 & more <tags> here.\n\n"
        ));
    };
    for i in 0..PARAGRAPHS / 2 {
        paragraph(i, &mut out);
    }
    out.push_str("| key | note | n |\n|---|---|--:|\n");
    for i in 0..ROWS {
        let note = if i % 8 == 0 {
            "a long note & more <x> ".repeat(7)
        } else {
            "ok".into()
        };
        out.push_str(&format!("| R{i:03} | {} | {} |\n", note.trim(), i * 7));
    }
    out.push('\n');
    for i in PARAGRAPHS / 2..PARAGRAPHS {
        paragraph(i, &mut out);
    }
    out
}

/// Every marker (`P000`…, `R000`…) of the reply, in order, once each, across `messages`.
fn assert_whole(messages: &[String]) {
    let all = messages.concat();
    let mut want: Vec<String> = (0..PARAGRAPHS / 2).map(|i| format!("P{i:03}")).collect();
    want.extend((0..ROWS).map(|i| format!("R{i:03}")));
    want.extend((PARAGRAPHS / 2..PARAGRAPHS).map(|i| format!("P{i:03}")));
    let mut at = 0;
    for marker in &want {
        let found = all[at..]
            .find(marker.as_str())
            .unwrap_or_else(|| panic!("{marker} missing or out of order"));
        at += found + marker.len();
        assert!(!all[at..].contains(marker.as_str()), "{marker} twice");
    }
}

fn profile(name: &str) -> Config {
    let mut c = Config::for_channel(&ChannelProfile::by_name(name).expect("profile"));
    c.coalesce_idle_ms = 0;
    c
}

#[test]
fn telegram_takes_every_message_of_a_long_rendered_reply() {
    let fake = FakeTelegram::start("1:tg", &["42"]);
    let bot = Telegram::with_options("1:tg", &fake.url(), &HttpOptions::default());
    let driver = Driver::spawn(PlatformSink::new(bot), DriverOptions::default());
    stream_words(&driver, "42", profile("telegram"), &reply(), Duration::ZERO);
    assert!(driver.shutdown(Duration::from_secs(60)).is_clean());
    let refused: Vec<_> = fake.calls().into_iter().filter(|c| c.2 != 200).collect();
    assert!(refused.is_empty(), "{refused:?}");
    let texts = fake.texts("42");
    for t in &texts {
        // The fake keeps the text after entity parsing: what Telegram counts.
        assert!(
            t.encode_utf16().count() <= 4000,
            "{}",
            t.encode_utf16().count()
        );
    }
    assert!(texts.len() > 3, "{}", texts.len());
    assert_whole(&texts);
}

#[test]
fn discord_takes_every_message_of_a_long_rendered_reply() {
    let fake = FakeDiscord::start("d.tok", &["77"]);
    let bot = Discord::with_options("d.tok", &fake.url(), &HttpOptions::default());
    let driver = Driver::spawn(PlatformSink::new(bot), DriverOptions::default());
    stream_words(&driver, "77", profile("discord"), &reply(), Duration::ZERO);
    assert!(driver.shutdown(Duration::from_secs(60)).is_clean());
    let statuses = fake.statuses();
    assert!(statuses.iter().all(|&s| s == 200), "{statuses:?}");
    let contents = fake.contents("77");
    for c in &contents {
        assert!(c.chars().count() <= 2000, "{}", c.chars().count());
    }
    assert_whole(&contents);
}

#[test]
fn slack_takes_every_message_of_a_long_rendered_reply() {
    let fake = FakeSlack::start("xoxb-1", &["C1"]);
    let bot = Slack::with_options("xoxb-1", &fake.url(), &HttpOptions::default());
    let driver = Driver::spawn(PlatformSink::new(bot), DriverOptions::default());
    stream_words(&driver, "C1", profile("slack"), &reply(), Duration::ZERO);
    assert!(driver.shutdown(Duration::from_secs(60)).is_clean());
    let messages = fake.messages("C1");
    for m in &messages {
        // What is posted, escapes and link targets included, within the profile's 4000
        // characters (Slack's advice; it refuses past 40 000).
        assert_eq!(m.markup, "mrkdwn");
        assert!(m.raw.chars().count() <= 4000, "{}", m.raw.chars().count());
    }
    let texts: Vec<String> = messages.into_iter().map(|m| m.text).collect();
    assert_whole(&texts);
}
