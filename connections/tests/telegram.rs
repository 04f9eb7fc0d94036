//! The Telegram connection against a fake Bot API on loopback: each operation's request,
//! each documented answer read right, and real engines driven through the driver and the
//! worker-pool sink into fake chats.
#![allow(clippy::disallowed_methods)] // real servers, real time

mod fake;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake::telegram::{FakeTelegram, Fault};
use fake::{PROSE, failure, prose, send, stream_words};
use replystream::driver::{Driver, DriverOptions, StreamEvent};
use replystream::{
    ChannelProfile, Config, Entity, EntityKind, Format, HumanDelay, MessageKey, OwnedInput,
    Payload, PreviewMode, PreviewTransport, ReasoningMode, RenderOptions, Rendered, ReplyTarget,
    SendOp, SendRequest, render,
};
use replystream_connections::sink::PlatformSink;
use replystream_connections::telegram::Telegram;
use replystream_connections::{HttpOptions, MediaRoots, Outcome, Platform};

const TOKEN: &str = "123456:SECRET-token_value";

fn bot(fake: &FakeTelegram) -> Telegram {
    Telegram::with_options(TOKEN, &fake.url(), &HttpOptions::default())
}

#[test]
fn create_edit_unchanged_edit_and_delete() {
    let fake = FakeTelegram::start(TOKEN, &["42"]);
    let tg = bot(&fake);
    let key = MessageKey(0);
    let created = tg.deliver(
        "42",
        &send(
            SendOp::Create { key: Some(key) },
            Payload::text("Hi ✓ 👩‍👩‍👧"),
            None,
        ),
    );
    let Outcome::Delivered {
        message_ref: Some(id),
    } = created
    else {
        panic!("{created:?}")
    };
    assert_eq!(fake.texts("42"), ["Hi ✓ 👩‍👩‍👧"]);
    let edit = send(
        SendOp::Edit { key },
        Payload::text("Hi ✓ 👩‍👩‍👧, and more\r\nCRLF"),
        Some(&id),
    );
    assert_eq!(
        tg.deliver("42", &edit),
        Outcome::delivered(Some(id.clone()))
    );
    // The same text again: Telegram says "message is not modified", which is delivered.
    assert_eq!(
        tg.deliver("42", &edit),
        Outcome::delivered(Some(id.clone()))
    );
    assert_eq!(fake.texts("42"), ["Hi ✓ 👩‍👩‍👧, and more\r\nCRLF"]);
    assert_eq!(fake.messages("42")[0].edits, 1);
    let statuses: Vec<u16> = fake.calls().iter().map(|c| c.2).collect();
    assert_eq!(statuses, [200, 200, 400]);
    let delete = send(SendOp::Delete { key }, Payload::default(), Some(&id));
    assert_eq!(
        tg.deliver("42", &delete),
        Outcome::delivered(Some(id.clone()))
    );
    assert!(fake.texts("42").is_empty());
    // Deleting it again: "message to delete not found" means it is gone, as asked.
    assert_eq!(tg.deliver("42", &delete), Outcome::delivered(Some(id)));
    // An edit without a message id cannot be made, now or later.
    assert!(
        failure(tg.deliver("42", &send(SendOp::Edit { key }, Payload::text("x"), None))).permanent
    );
}

#[test]
fn drafts_use_a_non_zero_draft_id_and_a_draft_delete_calls_nothing() {
    let fake = FakeTelegram::start(TOKEN, &["7"]);
    let tg = bot(&fake);
    let draft = send(
        SendOp::Draft { key: MessageKey(0) },
        Payload::text("Thinking about it"),
        None,
    );
    assert_eq!(tg.deliver("7", &draft), Outcome::delivered(None));
    let draft = send(
        SendOp::Draft { key: MessageKey(0) },
        Payload::text("Thinking about it more"),
        None,
    );
    assert_eq!(tg.deliver("7", &draft), Outcome::delivered(None));
    assert_eq!(
        fake.drafts("7").into_iter().collect::<Vec<_>>(),
        [(1, "Thinking about it more".to_owned())]
    );
    let clear = send(
        SendOp::Delete { key: MessageKey(0) },
        Payload::default(),
        None,
    );
    assert_eq!(tg.deliver("7", &clear), Outcome::delivered(None));
    assert_eq!(fake.methods(), ["sendMessageDraft", "sendMessageDraft"]);
    assert!(fake.texts("7").is_empty());
}

#[test]
fn answers_that_mean_retry_later_or_give_up() {
    let fake = FakeTelegram::start(TOKEN, &["1", "2"]);
    let tg = bot(&fake);
    let hello = send(SendOp::CREATE, Payload::text("hello"), None);
    fake.fail_next("sendMessage", Fault::RateLimit(3));
    let f = failure(tg.deliver("1", &hello));
    assert_eq!(
        (f.retry_after_ms, f.permanent),
        (Some(3000), false),
        "{f:?}"
    );
    assert!(f.reason.contains("429"), "{}", f.reason);

    let fake = FakeTelegram::start(TOKEN, &["1", "2"]);
    let tg = bot(&fake);
    fake.fail_next("sendMessage", Fault::ServerError);
    let f = failure(tg.deliver("1", &hello));
    assert_eq!((f.retry_after_ms, f.permanent), (None, false));

    fake.block("2");
    let f = failure(tg.deliver("2", &hello));
    assert!(
        f.permanent && f.reason.contains("403") && f.reason.contains("blocked"),
        "{f:?}"
    );
    let f = failure(tg.deliver("999", &hello));
    assert!(f.permanent && f.reason.contains("chat not found"), "{f:?}");

    let long = "é".repeat(4097);
    let f = failure(tg.deliver("1", &send(SendOp::CREATE, Payload::text(long), None)));
    assert!(
        f.permanent && f.reason.contains("message is too long"),
        "{f:?}"
    );
    // 4096 UTF-16 units exactly is fine, even as 2048 surrogate pairs.
    let fits = "😀".repeat(2048);
    assert!(
        tg.deliver("1", &send(SendOp::CREATE, Payload::text(fits), None))
            .is_delivered()
    );

    // A refused token: permanent, and the token is nowhere in what is reported.
    let wrong = Telegram::with_options("999:WRONG-secret", &fake.url(), &HttpOptions::default());
    let f = failure(wrong.deliver("1", &hello));
    assert!(f.permanent && f.reason.contains("401"), "{f:?}");
    assert!(!f.reason.contains("WRONG-secret"));
}

#[test]
fn an_unreachable_server_is_a_transient_failure_without_the_token() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let options = HttpOptions::default().with_timeout(Duration::from_secs(5));
    let tg = Telegram::with_options(TOKEN, &format!("http://127.0.0.1:{port}"), &options);
    let began = Instant::now();
    let f = failure(tg.deliver("1", &send(SendOp::CREATE, Payload::text("hi"), None)));
    assert!(!f.permanent && f.retry_after_ms.is_none(), "{f:?}");
    assert!(f.reason.starts_with("network:"), "{}", f.reason);
    assert!(!f.reason.contains("SECRET"), "{}", f.reason);
    assert!(began.elapsed() < Duration::from_secs(5));
}

#[test]
fn media_by_url_and_by_upload_with_captions_voice_and_replies() {
    let fake = FakeTelegram::start(TOKEN, &["5"]);
    let dir = std::env::temp_dir().join(format!("rs-conn-media-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tg = bot(&fake).with_media_roots(MediaRoots::new([&dir]));
    let voice = dir.join("note.ogg");
    std::fs::write(&voice, b"OggS\0\x01binary\r\n--not-a-boundary").unwrap();
    let payload = Payload {
        text: "Look at *this*".into(),
        media: vec![
            "https://example.com/cat.JPG?size=large".into(),
            voice.to_string_lossy().into_owned(),
        ],
        reply_to: Some(ReplyTarget::Id("77".into())),
        audio_as_voice: true,
        ..Payload::default()
    };
    let out = tg.deliver("5", &send(SendOp::CREATE, payload, None));
    let msgs = fake.messages("5");
    assert_eq!(out, Outcome::delivered(Some("101".into())));
    assert_eq!(msgs.len(), 2);
    assert_eq!(
        (msgs[0].kind.as_str(), msgs[0].text.as_str()),
        ("photo", "Look at *this*")
    );
    assert_eq!(
        msgs[0].file.as_deref(),
        Some("https://example.com/cat.JPG?size=large")
    );
    assert_eq!(msgs[0].reply_to, Some(77));
    assert_eq!(
        (msgs[1].kind.as_str(), msgs[1].text.as_str()),
        ("voice", "")
    );
    assert_eq!(
        msgs[1].file.as_deref(),
        Some("upload:note.ogg:audio/ogg:30")
    );
    assert_eq!(msgs[1].reply_to, None);

    // A caption over 1024 units goes first as a message of its own.
    let fake = FakeTelegram::start(TOKEN, &["5"]);
    let tg = bot(&fake).with_media_roots(MediaRoots::new([&dir]));
    let text = "word ".repeat(300);
    let payload = Payload {
        text: text.clone(),
        media: vec!["https://example.com/report.pdf".into()],
        ..Payload::default()
    };
    assert!(
        tg.deliver("5", &send(SendOp::CREATE, payload, None))
            .is_delivered()
    );
    let msgs = fake.messages("5");
    assert_eq!(
        msgs.iter().map(|m| m.kind.as_str()).collect::<Vec<_>>(),
        ["text", "document"]
    );
    assert_eq!(msgs[0].text, text.trim());
    assert_eq!(msgs[1].text, "");

    // A missing file is permanent, and says which file.
    let payload = Payload {
        media: vec![dir.join("missing.png").to_string_lossy().into_owned()],
        ..Payload::default()
    };
    let f = failure(tg.deliver("5", &send(SendOp::CREATE, payload, None)));
    assert!(f.permanent && f.reason.contains("missing.png"), "{f:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_rate_limit_part_way_through_media_does_not_post_the_first_part_twice() {
    let fake = FakeTelegram::start(TOKEN, &["5"]);
    let tg = bot(&fake);
    let payload = Payload {
        text: "two pictures".into(),
        media: vec!["https://e.com/a.png".into(), "https://e.com/b.png".into()],
        ..Payload::default()
    };
    let s = send(SendOp::CREATE, payload, None);
    // The first photo goes through; the second meets a 1 s rate limit.
    fake.fail_later("sendPhoto", 1, Fault::RateLimit(1));
    assert_eq!(failure(tg.deliver("5", &s)).retry_after_ms, Some(1000));
    assert_eq!(fake.messages("5").len(), 1);
    std::thread::sleep(Duration::from_millis(1000));
    assert!(tg.deliver("5", &s).is_delivered());
    let files: Vec<_> = fake
        .messages("5")
        .into_iter()
        .map(|m| m.file.unwrap())
        .collect();
    assert_eq!(files, ["https://e.com/a.png", "https://e.com/b.png"]);
    assert_eq!(fake.state.lock().unwrap().early_calls, 0);
}

/// A send built by hand whose text to post is `rendered`, in `format`.
fn rendered_send(op: SendOp, markdown: &str, format: Format, rendered: Rendered) -> SendRequest {
    let mut s = send(op, Payload::text(markdown), None);
    s.format = format;
    s.rendered = Some(rendered);
    s
}

#[test]
fn html_that_telegram_cannot_parse_is_sent_once_more_as_its_visible_text() {
    let fake = FakeTelegram::start(TOKEN, &["3"]);
    let tg = bot(&fake);
    let fine = Rendered {
        text: "<b>fine</b> &amp; text".into(),
        entities: Vec::new(),
    };
    let s = rendered_send(
        SendOp::CREATE,
        "**fine** & text",
        Format::TelegramHtml,
        fine,
    );
    assert!(tg.deliver("3", &s).is_delivered());
    // Not HTML Telegram reads: a bare `<` inside the bold (a renderer bug, say). The `<`
    // is no tag Telegram knows, so the plain retry shows it as written.
    let broken = Rendered {
        text: "<b>a < b &amp; c</b>".into(),
        entities: Vec::new(),
    };
    let s = rendered_send(
        SendOp::CREATE,
        "**a < b & c**",
        Format::TelegramHtml,
        broken,
    );
    assert!(tg.deliver("3", &s).is_delivered());
    let msgs = fake.messages("3");
    assert_eq!(msgs[0].text, "fine & text");
    assert_eq!(msgs[0].styled("bold"), ["fine"]);
    assert_eq!(msgs[0].parse_mode.as_deref(), Some("HTML"));
    // The retry shows what the HTML meant, unstyled: no tags, no Markdown stars.
    assert_eq!(msgs[1].text, "a < b & c");
    assert!(msgs[1].spans.is_empty());
    assert_eq!(msgs[1].parse_mode, None);
    let statuses: Vec<u16> = fake.calls().iter().map(|c| c.2).collect();
    assert_eq!(statuses, [200, 400, 200], "one refusal, one plain retry");
}

#[test]
fn entities_telegram_refuses_are_sent_once_more_without_them() {
    let fake = FakeTelegram::start(TOKEN, &["3"]);
    let tg = bot(&fake);
    let entity = |offset, length| Entity {
        kind: EntityKind::Bold,
        offset,
        length,
        url: None,
        language: None,
    };
    // "👍 ok": the emoji is two UTF-16 units; bold over "ok" is at 3+2.
    let good = Rendered {
        text: "👍 ok".into(),
        entities: vec![entity(3, 2)],
    };
    let s = rendered_send(SendOp::CREATE, "👍 **ok**", Format::TelegramEntities, good);
    assert!(tg.deliver("3", &s).is_delivered());
    // Past the end of the text (5 units).
    let bad = Rendered {
        text: "👍 ok".into(),
        entities: vec![entity(3, 3)],
    };
    let s = rendered_send(SendOp::CREATE, "👍 **ok**", Format::TelegramEntities, bad);
    assert!(tg.deliver("3", &s).is_delivered());
    let msgs = fake.messages("3");
    assert_eq!(msgs[0].styled("bold"), ["ok"]);
    assert_eq!((msgs[1].text.as_str(), msgs[1].spans.len()), ("👍 ok", 0));
    let statuses: Vec<u16> = fake.calls().iter().map(|c| c.2).collect();
    assert_eq!(statuses, [200, 400, 200]);
}

/// A reply with every kind of markup the formats carry, and hard text around it.
const STYLED: &str = "**Done** & <b>sent</b>: see [the docs](https://example.com/a?b=1&c=2) \
and `a<b`, ~~old~~ *new* 👩‍👩‍👧 中文\r\n\r\n```rust\nfn main() {}\n```\n\n> quoted\n";

/// Checks what the chat shows for `STYLED`, whatever Telegram format carried it.
fn assert_styled_reply_shows_right(msg: &fake::telegram::Message) {
    let text = &msg.text;
    for raw in ["**", "~~", "](", "```", "<b>Done", "&amp;", "&lt;"] {
        assert!(!text.contains(raw), "raw markup {raw:?} shows: {text:?}");
    }
    assert!(
        text.starts_with("Done & <b>sent</b>: see the docs and a<b, old new 👩‍👩‍👧 中文"),
        "{text:?}"
    );
    assert_eq!(msg.styled("bold"), ["Done"]);
    assert_eq!(msg.styled("italic"), ["new"]);
    assert_eq!(msg.styled("strikethrough"), ["old"]);
    assert_eq!(msg.styled("code"), ["a<b"]);
    assert_eq!(msg.styled("text_link"), ["the docs"]);
    let link = msg.spans.iter().find(|s| s.kind == "text_link").unwrap();
    assert_eq!(link.url.as_deref(), Some("https://example.com/a?b=1&c=2"));
    let pre = msg.spans.iter().find(|s| s.kind == "pre").unwrap();
    assert_eq!(msg.styled("pre")[0].trim_end(), "fn main() {}");
    assert_eq!(pre.language.as_deref(), Some("rust"));
    assert_eq!(msg.styled("blockquote")[0].trim_end(), "quoted");
}

/// Streams `STYLED` into `chat` as one final, through a real driver and the sink.
fn stream_styled(fake: &FakeTelegram, chat: &str, config: Config) {
    let driver = Driver::spawn(PlatformSink::new(bot(fake)), DriverOptions::default());
    stream_words(&driver, chat, config, STYLED, Duration::ZERO);
    let report = driver.shutdown(Duration::from_secs(20));
    assert!(report.is_clean(), "{report:?}");
}

#[test]
fn the_telegram_profile_posts_html_and_the_chat_shows_the_styles() {
    let fake = FakeTelegram::start(TOKEN, &["7"]);
    let config = Config::for_channel(&ChannelProfile::by_name("telegram").unwrap());
    assert_eq!(config.format, Format::TelegramHtml);
    stream_styled(&fake, "7", config);
    let msgs = fake.messages("7");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0].parse_mode.as_deref(), Some("HTML"));
    assert_styled_reply_shows_right(&msgs[0]);
}

#[test]
fn the_entities_format_posts_text_and_entities_and_the_chat_shows_the_same() {
    let fake = FakeTelegram::start(TOKEN, &["7", "8"]);
    let mut config = Config::for_channel(&ChannelProfile::by_name("telegram").unwrap());
    stream_styled(&fake, "7", config.clone());
    config.format = Format::TelegramEntities;
    stream_styled(&fake, "8", config);
    let (html, entities) = (&fake.messages("7")[0], &fake.messages("8")[0]);
    assert_eq!(entities.parse_mode, None);
    assert_styled_reply_shows_right(entities);
    // The same message either way: text and spans.
    assert_eq!(entities.text, html.text);
    assert_eq!(entities.spans, html.spans);
}

#[test]
fn a_markdown_format_goes_without_a_parse_mode_as_written() {
    let fake = FakeTelegram::start(TOKEN, &["7"]);
    let mut config = Config::for_channel(&ChannelProfile::by_name("telegram").unwrap());
    config.format = Format::Markdown;
    assert!(config.validate().is_ok());
    stream_styled(&fake, "7", config);
    let msgs = fake.messages("7");
    assert_eq!(msgs[0].parse_mode, None);
    assert_eq!(msgs[0].text, STYLED.trim_end());
}

#[test]
fn previews_and_drafts_are_styled_as_they_grow() {
    for transport in [PreviewTransport::Edit, PreviewTransport::Draft] {
        let fake = FakeTelegram::start(TOKEN, &["9"]);
        let mut config = Config::for_channel(&ChannelProfile::by_name("telegram").unwrap());
        config.preview = PreviewMode::Partial;
        config.preview_transport = transport;
        config.preview_throttle_ms = 50;
        let driver = Driver::spawn(PlatformSink::new(bot(&fake)), DriverOptions::default());
        let stream = driver.open("9", config, 7).unwrap();
        stream.text("**Bold start** and `code` ").unwrap();
        std::thread::sleep(Duration::from_millis(300));
        stream.text("then *more*").unwrap();
        std::thread::sleep(Duration::from_millis(300));
        stream.finish().unwrap();
        assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
        let msgs = fake.messages("9");
        assert_eq!(msgs.len(), 1, "{transport:?}: {msgs:?}");
        assert_eq!(msgs[0].text, "Bold start and code then more");
        assert_eq!(msgs[0].styled("bold"), ["Bold start"]);
        assert_eq!(msgs[0].styled("code"), ["code"]);
        assert_eq!(msgs[0].styled("italic"), ["more"]);
        let methods = fake.methods();
        let preview_method = match transport {
            PreviewTransport::Draft => "sendMessageDraft",
            _ => "editMessageText",
        };
        assert!(
            methods.iter().any(|m| m == preview_method),
            "{transport:?}: {methods:?}"
        );
        // Every preview went out as HTML and was shown without raw markup.
        assert!(
            fake.calls().iter().all(|c| c.2 == 200),
            "{transport:?}: {:?}",
            fake.calls()
        );
        for draft in fake.drafts("9").values() {
            assert!(!draft.contains("**") && !draft.contains("<b>"), "{draft:?}");
        }
    }
}

#[test]
fn a_caption_is_styled_and_its_entities_follow_the_trimmed_text() {
    let md = "  **Look**: `cat.png`  \nMEDIA: https://e.com/cat.png\n";
    for format in [Format::TelegramHtml, Format::TelegramEntities] {
        let fake = FakeTelegram::start(TOKEN, &["5"]);
        let mut config = Config::for_channel(&ChannelProfile::by_name("telegram").unwrap());
        config.format = format;
        stream_styled_text(&fake, "5", config, md);
        let msgs = fake.messages("5");
        assert_eq!(msgs.len(), 1, "{format:?}: {msgs:?}");
        assert_eq!(msgs[0].kind, "photo");
        assert_eq!(msgs[0].text, "Look: cat.png");
        assert_eq!(msgs[0].styled("bold"), ["Look"], "{format:?}");
        assert_eq!(msgs[0].styled("code"), ["cat.png"], "{format:?}");
    }
}

fn stream_styled_text(fake: &FakeTelegram, chat: &str, config: Config, text: &str) {
    let driver = Driver::spawn(PlatformSink::new(bot(fake)), DriverOptions::default());
    stream_words(&driver, chat, config, text, Duration::ZERO);
    let report = driver.shutdown(Duration::from_secs(20));
    assert!(report.is_clean(), "{report:?}");
}

fn block_config() -> Config {
    let mut config = Config::for_channel(&ChannelProfile::by_name("telegram").unwrap());
    config.block_streaming = true;
    config.chunk_min = 150;
    config.chunk_max = 400;
    config.coalesce_min = Some(150);
    config.coalesce_max = Some(400);
    config.human_delay = HumanDelay::Off;
    config
}

#[test]
fn a_reply_streamed_through_the_driver_arrives_whole_and_in_order_despite_a_429() {
    let fake = FakeTelegram::start(TOKEN, &["-100123"]);
    fake.set_latency(Duration::from_millis(20));
    // The third message meets a 1 s rate limit.
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let seen = outcomes.clone();
    let idle = Arc::new(Mutex::new(Vec::new()));
    let idle_seen = idle.clone();
    let sink = PlatformSink::new(bot(&fake))
        .on_delivery(move |r| {
            seen.lock()
                .unwrap()
                .push((r.send.op.name(), r.outcome.clone(), r.began))
        })
        .on_event(move |_, e| {
            if let StreamEvent::Idle(outcome) = e {
                idle_seen.lock().unwrap().push(outcome.clone());
            }
        });
    let driver = Driver::spawn(sink, DriverOptions::default());
    let mut sent = 0;
    // Inject the fault once two messages are in the chat.
    let stream = driver.open("-100123", block_config(), 7).unwrap();
    for word in PROSE.split_inclusive(' ') {
        stream.text(word).unwrap();
        if sent == 0 && fake.texts("-100123").len() >= 2 {
            fake.fail_next("sendMessage", Fault::RateLimit(1));
            sent = 1;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(20));
    assert!(report.is_clean(), "{report:?}");
    let texts = fake.texts("-100123");
    assert!(texts.len() >= 4, "{texts:?}");
    fake::tiles(PROSE, &texts).unwrap();
    for t in &texts {
        assert!(t.encode_utf16().count() <= 4000, "{t}");
    }
    let outcomes = outcomes.lock().unwrap();
    let limited: Vec<_> = outcomes.iter().filter(|o| !o.1.is_delivered()).collect();
    assert_eq!(
        limited.len(),
        1,
        "exactly one call met the limit: {outcomes:?}"
    );
    assert_eq!(
        fake.state.lock().unwrap().early_calls,
        0,
        "a retry came early"
    );
    let idle = idle.lock().unwrap();
    assert_eq!(idle.len(), 1);
    assert!(idle[0].all_delivered(), "{:?}", idle[0]);
}

#[test]
fn a_live_preview_is_created_edited_and_finalized_in_place() {
    let fake = FakeTelegram::start(TOKEN, &["99"]);
    let mut config = Config::for_channel(&ChannelProfile::by_name("telegram").unwrap());
    config.preview = PreviewMode::Partial;
    config.preview_throttle_ms = 250;
    let text = prose(1500);
    let driver = Driver::spawn(PlatformSink::new(bot(&fake)), DriverOptions::default());
    stream_words(&driver, "99", config, text, Duration::from_millis(3));
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    let msgs = fake.messages("99");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0].text, text.trim_end());
    assert!(msgs[0].edits >= 2, "the preview moved: {msgs:?}");
    let methods = fake.methods();
    assert_eq!(methods[0], "sendMessage");
    assert!(
        methods[1..].iter().all(|m| m == "editMessageText"),
        "{methods:?}"
    );
}

#[test]
fn a_slow_chat_does_not_hold_up_another() {
    let fake = FakeTelegram::start(TOKEN, &["slow", "fast"]);
    fake.slow_chat("slow", Duration::from_millis(800));
    let driver = Driver::spawn(
        PlatformSink::new(bot(&fake)).with_workers(2),
        DriverOptions::default(),
    );
    let began = Instant::now();
    let text = prose(1200);
    stream_words(&driver, "slow", block_config(), text, Duration::ZERO);
    stream_words(&driver, "fast", block_config(), text, Duration::ZERO);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && fake::tiles(text, &fake.texts("fast")).is_err() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let fast_done = began.elapsed();
    let slow_then = fake.texts("slow").len();
    assert!(
        fake::tiles(text, &fake.texts("fast")).is_ok(),
        "fast chat stuck"
    );
    assert!(driver.shutdown(Duration::from_secs(30)).is_clean());
    let slow_total = fake.texts("slow").len();
    // The fast chat was complete while the slow one (800 ms a call) had most of its
    // messages still to come.
    assert!(
        slow_total >= 3 && slow_then <= 1,
        "slow chat had {slow_then} of {slow_total}"
    );
    assert!(
        fast_done < Duration::from_secs(3),
        "fast chat waited {fast_done:?}"
    );
    fake::tiles(text, &fake.texts("slow")).unwrap();
}

#[test]
fn updates_bring_text_messages_and_the_next_offset() {
    let fake = FakeTelegram::start(TOKEN, &["31"]);
    let tg = bot(&fake);
    fake.user_says("31", "hello bot ✓");
    fake.user_says("-77", "from a group");
    let (next, messages) = tg.updates(0, 0).unwrap();
    let got: Vec<(&str, &str, &str)> = messages
        .iter()
        .map(|m| (m.chat.as_str(), m.message_id.as_str(), m.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("31", "5000", "hello bot ✓"),
            ("-77", "5010", "from a group")
        ]
    );
    // The edited message (update 900) is skipped but counted.
    assert_eq!(next, 901);
    assert_eq!(tg.updates(next, 0).unwrap(), (901, Vec::new()));
}

#[test]
fn workers_keep_their_connections_open_between_calls() {
    let chats: Vec<String> = (0..6).map(|i| format!("{}", 600 + i)).collect();
    let refs: Vec<&str> = chats.iter().map(String::as_str).collect();
    let fake = FakeTelegram::start(TOKEN, &refs);
    fake.set_latency(Duration::from_millis(10));
    let driver = Driver::spawn(
        PlatformSink::new(bot(&fake)).with_workers(6),
        DriverOptions::default(),
    );
    let text = prose(1200);
    let handles: Vec<_> = chats
        .iter()
        .map(|c| {
            let stream = driver.open(c, block_config(), 1).unwrap();
            stream.text(text).unwrap();
            stream.finish().unwrap();
            stream
        })
        .collect();
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    drop(handles);
    for c in &chats {
        fake::tiles(text, &fake.texts(c)).unwrap();
    }
    let calls = fake.calls().len();
    let connections = fake
        .server
        .connections
        .load(std::sync::atomic::Ordering::Relaxed);
    assert!(calls >= 18, "{calls}");
    assert!(
        connections <= 6,
        "{connections} connections for {calls} calls on 6 workers"
    );
}

#[test]
fn dns_and_tls_failures_are_transient_network_failures() {
    let hi = send(SendOp::CREATE, Payload::text("hi"), None);
    let options = HttpOptions::default().with_timeout(Duration::from_secs(5));
    let nowhere = Telegram::with_options(TOKEN, "http://replystream-test.invalid", &options);
    let f = failure(nowhere.deliver("1", &hi));
    assert!(!f.permanent && f.reason.starts_with("network:"), "{f:?}");
    assert!(!f.reason.contains("SECRET"), "{}", f.reason);
    // TLS to a server that speaks plain HTTP: the handshake fails.
    let fake = FakeTelegram::start(TOKEN, &["1"]);
    let tls = fake.url().replace("http://", "https://");
    let f = failure(Telegram::with_options(TOKEN, &tls, &options).deliver("1", &hi));
    assert!(!f.permanent && f.reason.starts_with("network:"), "{f:?}");
    assert!(!f.reason.contains("SECRET"), "{}", f.reason);
    assert!(fake.texts("1").is_empty());
}

#[test]
fn a_500_storm_is_retried_with_backoff_then_reported_undelivered() {
    let fake = FakeTelegram::start(TOKEN, &["8"]);
    fake.break_down();
    let idle = Arc::new(Mutex::new(Vec::new()));
    let seen = idle.clone();
    let sink = PlatformSink::new(bot(&fake)).on_event(move |_, e| {
        if let StreamEvent::Idle(o) = e {
            seen.lock().unwrap().push(o.clone());
        }
    });
    let driver = Driver::spawn(sink, DriverOptions::default());
    stream_words(
        &driver,
        "8",
        block_config(),
        "A short reply that never arrives.",
        Duration::ZERO,
    );
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    let outcome = idle.lock().unwrap().pop().expect("the turn ended");
    assert!(!outcome.all_delivered());
    assert_eq!(outcome.undelivered.len(), 1, "{outcome:?}");
    assert_eq!(
        outcome.undelivered[0].payload.text,
        "A short reply that never arrives."
    );
    // The block, then the final that carries its text again: each tried once and retried
    // three times, every retry at least the engine's 1 s backoff after the try before.
    let times: Vec<Instant> = fake.calls().iter().map(|c| c.3).collect();
    assert_eq!(times.len(), 8, "{:?}", fake.calls());
    for send in times.chunks(4) {
        for pair in send.windows(2) {
            assert!(
                pair[1] - pair[0] >= Duration::from_millis(1000),
                "a retry came early"
            );
        }
    }
}

#[test]
fn a_panicking_observer_does_not_stop_deliveries() {
    let fake = FakeTelegram::start(TOKEN, &["4"]);
    let sink = PlatformSink::new(bot(&fake))
        .with_workers(1)
        .on_delivery(|_| panic!("an observer bug"));
    let driver = Driver::spawn(sink, DriverOptions::default());
    let text = prose(900);
    stream_words(&driver, "4", block_config(), text, Duration::ZERO);
    stream_words(
        &driver,
        "4",
        block_config(),
        "A second turn.",
        Duration::ZERO,
    );
    assert!(driver.shutdown(Duration::from_secs(10)).is_clean());
    let texts = fake.texts("4");
    fake::tiles(&format!("{text}\n\nA second turn."), &texts).unwrap();
}

#[test]
fn a_server_that_never_answers_fails_after_the_timeout_not_later() {
    let fake = FakeTelegram::start(TOKEN, &["1"]);
    fake.set_latency(Duration::from_secs(10));
    let options = HttpOptions::default().with_timeout(Duration::from_millis(500));
    let tg = Telegram::with_options(TOKEN, &fake.url(), &options);
    let began = Instant::now();
    let f = failure(tg.deliver("1", &send(SendOp::CREATE, Payload::text("hi"), None)));
    let took = began.elapsed();
    assert!(!f.permanent && f.reason.starts_with("network:"), "{f:?}");
    assert!(!f.reason.contains("SECRET"), "{}", f.reason);
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_secs(3),
        "{took:?}"
    );
}

#[test]
fn reply_to_current_replies_to_the_message_the_host_named_and_only_in_its_stream() {
    let fake = FakeTelegram::start(TOKEN, &["99"]);
    let config = Config::for_channel(&ChannelProfile::by_name("telegram").unwrap());
    let sink = PlatformSink::new(bot(&fake));
    let current = sink.current_messages();
    let driver = Driver::spawn(sink, DriverOptions::default());
    // Two turns of the same chat: the first answers message 4711, the second was not told.
    let first = driver.open("99", config.clone(), 7).unwrap();
    current.set(first.id(), "4711");
    first.text("[[reply_to_current]] Yes: 漢字, ").unwrap();
    first.text("👩‍👩‍👧 and\r\nmore.").unwrap();
    first.finish().unwrap();
    let second = driver.open("99", config, 8).unwrap();
    second.text("[[reply_to_current]]Second turn.").unwrap();
    second.finish().unwrap();
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    let msgs = fake.messages("99");
    let got: Vec<(&str, Option<i64>)> =
        msgs.iter().map(|m| (m.text.as_str(), m.reply_to)).collect();
    assert_eq!(
        got,
        [
            // Rendered to Telegram HTML, a CRLF line break is a line break.
            ("Yes: 漢字, 👩‍👩‍👧 and\nmore.", Some(4711)),
            ("Second turn.", None)
        ]
    );
    assert!(current.get(first.id()).is_none(), "forgotten once idle");
}

/// Reasoning shown: while the preview streams, Telegram shows it in an expandable quote
/// above the answer; the reasoning's own message, sent at the end, is italic. Nothing
/// shows the `**>`…`||` notation the preview's Markdown uses for it.
#[test]
fn reasoning_shows_in_an_expandable_quote_in_the_preview_and_italic_in_its_message() {
    let fake = FakeTelegram::start(TOKEN, &["11"]);
    let mut config = Config::for_channel(&ChannelProfile::by_name("telegram").unwrap());
    config.reasoning = ReasoningMode::On;
    config.preview = PreviewMode::Partial;
    config.preview_throttle_ms = 50;
    let driver = Driver::spawn(PlatformSink::new(bot(&fake)), DriverOptions::default());
    let stream = driver.open("11", config, 7).unwrap();
    let thinking = "Pools first; then sizes & timeouts.";
    for word in thinking.split_inclusive(' ') {
        stream.push(OwnedInput::ThinkingDelta(word.into())).unwrap();
        std::thread::sleep(Duration::from_millis(30));
    }
    stream.push(OwnedInput::ThinkingEnd).unwrap();
    for word in "Use **one pool** per host.".split_inclusive(' ') {
        stream.text(word).unwrap();
        std::thread::sleep(Duration::from_millis(60));
    }
    stream.finish().unwrap();
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    let st = fake.state.lock().unwrap();
    for (method, m) in &st.shown {
        for raw in ["**", "||", "<b>", "&amp;"] {
            assert!(
                !m.text.contains(raw),
                "{method} shows {raw:?}: {:?}",
                m.text
            );
        }
    }
    let quoted = st.shown.iter().find(|(_, m)| {
        m.styled("expandable_blockquote")
            .iter()
            .any(|q| q.contains("sizes & timeouts"))
    });
    assert!(
        quoted.is_some(),
        "no preview quoted the reasoning: {:?}",
        st.shown
    );
    drop(st);
    let msgs = fake.messages("11");
    let reasoning = msgs
        .iter()
        .find(|m| m.text.contains("Pools first"))
        .expect("the reasoning's message");
    assert!(
        reasoning
            .styled("italic")
            .iter()
            .any(|i| i.contains("Pools first; then sizes & timeouts.")),
        "{reasoning:?}"
    );
    let answer = msgs.iter().find(|m| m.text.contains("per host")).unwrap();
    assert_eq!(answer.text, "Use one pool per host.");
    assert_eq!(answer.styled("bold"), ["one pool"]);
}

/// An uploaded file's caption goes in the multipart form: `parse_mode` as a field, or
/// `caption_entities` as JSON text; a refused caption is sent once more as its visible text.
#[test]
fn an_uploaded_files_caption_carries_its_markup_in_the_form() {
    let dir = std::env::temp_dir().join(format!("rs-conn-caption-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let photo = dir.join("chart.png");
    std::fs::write(&photo, b"\x89PNG\r\n\x1a\n").unwrap();
    let md = "**Q3** 📈 & more";
    let payload = Payload {
        text: md.into(),
        media: vec![photo.to_string_lossy().into_owned()],
        ..Payload::default()
    };
    let html = render(md, Format::TelegramHtml, &RenderOptions::default());
    let entities = render(md, Format::TelegramEntities, &RenderOptions::default());
    let broken = Rendered {
        text: "<b>Q3</b> 📈 & more".into(), // a bare `&`: refused
        entities: Vec::new(),
    };
    let cases = [
        (Format::TelegramHtml, html),
        (Format::TelegramEntities, entities),
        (Format::TelegramHtml, broken),
    ];
    for (i, (format, rendered)) in cases.into_iter().enumerate() {
        let fake = FakeTelegram::start(TOKEN, &["5"]);
        let mut s = send(SendOp::CREATE, payload.clone(), None);
        s.format = format;
        s.rendered = Some(rendered);
        let tg = bot(&fake).with_media_roots(MediaRoots::new([&dir]));
        assert!(tg.deliver("5", &s).is_delivered(), "case {i}");
        let msgs = fake.messages("5");
        assert_eq!(msgs.len(), 1, "case {i}: {msgs:?}");
        assert_eq!(msgs[0].kind, "photo");
        assert_eq!(
            msgs[0].file.as_deref(),
            Some("upload:chart.png:image/png:8")
        );
        assert_eq!(msgs[0].text, "Q3 📈 & more", "case {i}");
        let bold: &[&str] = if i == 2 { &[] } else { &["Q3"] };
        assert_eq!(msgs[0].styled("bold"), bold, "case {i}");
        let statuses: Vec<u16> = fake.calls().iter().map(|c| c.2).collect();
        let expected: &[u16] = if i == 2 { &[400, 200] } else { &[200] };
        assert_eq!(statuses, expected, "case {i}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
