//! The Discord connection against a fake REST API on loopback.
#![allow(clippy::disallowed_methods)] // real servers, real time

mod fake;

use std::time::{Duration, Instant};

use fake::discord::FakeDiscord;
use fake::{failure, prose, send, stream_words};
use replystream::driver::{Driver, DriverOptions};
use replystream::{ChannelProfile, Config, Format, MessageKey, Payload, ReplyTarget, SendOp};
use replystream_connections::discord::Discord;
use replystream_connections::sink::PlatformSink;
use replystream_connections::{HttpOptions, MediaRoots, Outcome, Platform};

const TOKEN: &str = "MTIz.discord-SECRET";

fn bot(fake: &FakeDiscord) -> Discord {
    Discord::with_options(TOKEN, &fake.url(), &HttpOptions::default())
}

#[test]
fn create_edit_delete_with_mentions_off_and_a_reply_reference() {
    let fake = FakeDiscord::start(TOKEN, &["555"]);
    let dc = bot(&fake);
    let key = MessageKey(3);
    let payload = Payload {
        text: "@everyone look, <@1234> said ✓".into(),
        reply_to: Some(ReplyTarget::Id("888".into())),
        ..Payload::default()
    };
    let created = dc.deliver(
        "555",
        &send(SendOp::Create { key: Some(key) }, payload, None),
    );
    let Outcome::Delivered {
        message_ref: Some(id),
    } = created
    else {
        panic!("{created:?}")
    };
    let m = &fake.messages("555")[0];
    assert_eq!(m.content, "@everyone look, <@1234> said ✓");
    assert_eq!(m.reply_to.as_deref(), Some("888"));
    assert!(m.pings.is_empty(), "nobody is pinged: {:?}", m.pings);
    let edit = send(
        SendOp::Edit { key },
        Payload::text("edited <@1234>"),
        Some(&id),
    );
    assert_eq!(
        dc.deliver("555", &edit),
        Outcome::delivered(Some(id.clone()))
    );
    assert_eq!(fake.contents("555"), ["edited <@1234>"]);
    assert!(fake.messages("555")[0].pings.is_empty());
    let delete = send(SendOp::Delete { key }, Payload::default(), Some(&id));
    assert!(dc.deliver("555", &delete).is_delivered());
    assert!(fake.contents("555").is_empty());
    // Unknown Message on a second delete: gone, as asked.
    assert!(dc.deliver("555", &delete).is_delivered());
    assert_eq!(fake.statuses(), [200, 200, 204, 404]);

    // Opting in to user mentions pings the user, not everyone.
    let dc = bot(&fake).with_allowed_mentions(serde_json::json!({ "parse": ["users"] }));
    let hi = Payload::text("@everyone hi <@42>");
    assert!(
        dc.deliver("555", &send(SendOp::CREATE, hi, None))
            .is_delivered()
    );
    assert_eq!(fake.messages("555")[0].pings, ["42"]);
}

#[test]
fn rate_limits_fractional_seconds_and_refusals() {
    let fake = FakeDiscord::start(TOKEN, &["1"]);
    let dc = bot(&fake);
    let hi = send(SendOp::CREATE, Payload::text("hi"), None);
    fake.rate_limit_next(0.35);
    let f = failure(dc.deliver("1", &hi));
    assert_eq!((f.retry_after_ms, f.permanent), (Some(350), false), "{f:?}");
    std::thread::sleep(Duration::from_millis(350));
    assert!(dc.deliver("1", &hi).is_delivered());
    assert_eq!(fake.state.lock().unwrap().early_calls, 0);

    let f = failure(dc.deliver("404404", &hi));
    assert!(f.permanent && f.reason.contains("Unknown Channel"), "{f:?}");
    let long = send(SendOp::CREATE, Payload::text("ж".repeat(2001)), None);
    let f = failure(dc.deliver("1", &long));
    assert!(f.permanent && f.reason.contains("50035"), "{f:?}");
    let wrong = Discord::with_options("bad-SECRET", &fake.url(), &HttpOptions::default());
    let f = failure(wrong.deliver("1", &hi));
    assert!(
        f.permanent && f.reason.contains("401") && !f.reason.contains("SECRET"),
        "{f:?}"
    );
    // Discord has no drafts.
    let draft = send(
        SendOp::Draft { key: MessageKey(0) },
        Payload::text("x"),
        None,
    );
    assert!(failure(dc.deliver("1", &draft)).permanent);
}

#[test]
fn local_files_are_attachments_and_urls_are_links() {
    let fake = FakeDiscord::start(TOKEN, &["9"]);
    let dc = bot(&fake).with_media_roots(MediaRoots::new([std::env::temp_dir()]));
    let path = std::env::temp_dir().join(format!("rs-conn-dc-{}.png", std::process::id()));
    std::fs::write(
        &path,
        [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n', 0, 0],
    )
    .unwrap();
    let payload = Payload {
        text: "chart:".into(),
        media: vec![
            path.to_string_lossy().into_owned(),
            "https://example.com/a.gif".into(),
        ],
        ..Payload::default()
    };
    assert!(
        dc.deliver("9", &send(SendOp::CREATE, payload, None))
            .is_delivered()
    );
    std::fs::remove_file(&path).unwrap();
    let m = &fake.messages("9")[0];
    assert_eq!(m.content, "chart:\nhttps://example.com/a.gif");
    let name = path.file_name().unwrap().to_string_lossy();
    assert_eq!(m.attachments, [format!("{name}:10")]);
}

#[test]
fn an_emptied_bucket_is_waited_out_before_the_next_send_not_hit() {
    let fake = FakeDiscord::start(TOKEN, &["77"]);
    // Two sends per 400 ms window, announced in the headers.
    fake.bucket(2, Duration::from_millis(400));
    let mut config = Config::for_channel(&ChannelProfile::by_name("discord").unwrap());
    config.chunk_min = 100;
    config.chunk_max = 250;
    config.coalesce_min = Some(100);
    config.coalesce_max = Some(250);
    let text = prose(1400);
    let driver = Driver::spawn(PlatformSink::new(bot(&fake)), DriverOptions::default());
    let began = Instant::now();
    stream_words(&driver, "77", config, text, Duration::ZERO);
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    let contents = fake.contents("77");
    assert!(contents.len() >= 6, "{contents:?}");
    fake::tiles(text, &contents).unwrap();
    assert!(contents.iter().all(|c| c.chars().count() <= 2000));
    assert_eq!(fake.state.lock().unwrap().early_calls, 0, "a 429 was met");
    assert!(fake.statuses().iter().all(|s| *s == 200));
    // Six or more sends at two per 400 ms take at least two full windows.
    assert!(began.elapsed() >= Duration::from_millis(800));
}

/// A request that cannot even be written (a chat id or an API URL that makes no valid URL)
/// is refused for good at once: retrying the same bytes cannot help, and a retry loop would
/// hold the turn until its delivery timeout.
#[test]
fn a_request_that_makes_no_valid_url_is_a_permanent_failure() {
    let fake = FakeDiscord::start(TOKEN, &["1"]);
    let hi = send(SendOp::CREATE, Payload::text("hi"), None);
    let f = failure(bot(&fake).deliver("12 34", &hi));
    assert!(f.permanent && f.reason.contains("invalid"), "{f:?}");
    let broken = Discord::with_options(TOKEN, "http://[::1", &HttpOptions::default());
    let f = failure(broken.deliver("1", &hi));
    assert!(f.permanent && !f.reason.contains("SECRET"), "{f:?}");
    assert!(fake.messages("1").is_empty());
    // A server that is not there is still worth a retry.
    let gone = Discord::with_options(TOKEN, "http://127.0.0.1:9", &HttpOptions::default());
    assert!(!failure(gone.deliver("1", &hi)).permanent);
}

/// The Discord profile's format reaches the channel: a table (which Discord does not draw)
/// arrives as an aligned code block, `@everyone` from the model is defused in the text
/// itself (a zero-width space after the `@`) on top of `allowed_mentions`, and the rest of
/// the Markdown (which Discord draws) is kept as written.
#[test]
fn the_discord_format_reaches_the_channel_tables_as_code_and_mass_mentions_defused() {
    let fake = FakeDiscord::start(TOKEN, &["77"]);
    let config = Config::for_channel(&ChannelProfile::by_name("discord").unwrap());
    assert_eq!(config.format, Format::Discord);
    let md =
        "**Scores** for @everyone:\n\n| name | pts |\n|---|--:|\n| Zoë | 7 |\n| Al | 12 |\n\nDone.";
    let driver = Driver::spawn(PlatformSink::new(bot(&fake)), DriverOptions::default());
    stream_words(&driver, "77", config, md, Duration::ZERO);
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    let msgs = fake.messages("77");
    let content: String = msgs
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    assert_eq!(
        content,
        "**Scores** for @\u{200b}everyone:\n\n```\nname | pts\n-----|----\nZoë  |   7\nAl   |  12\n```\n\nDone."
    );
    assert!(msgs.iter().all(|m| m.pings.is_empty()), "{msgs:?}");
}
